import { existsSync } from 'node:fs';
import path from 'node:path';
import { resealStoredSecrets } from '../actors/secrets-at-rest.js';
import { ConfigError, loadConfig } from '../src/config.js';
import { startEmbeddedPostgres } from '../src/infra/embedded-postgres.js';
import { AuthorityFileName, authorityKeyIds, IssuerFileName, resealAuthorityFile } from '../src/infra/nats-auth/authority-file.js';
import { loadMigrations, migrate } from '../src/infra/migrate.js';
import { connectPostgres } from '../src/infra/postgres.js';
import { createLogger } from '../src/logger.js';
import { resolveKeyRing } from '../src/secrets/generated.js';
import { UnreadableSecretError } from '../src/secrets/key-ring.js';

/**
 * npm run reseal: seals every stored secret anew under SECRETS_KEY, opening what the key before
 * sealed with SECRETS_KEY_PREVIOUS: the TSE secrets, webhook secrets and apps' TOTP keys in Postgres (DATABASE_URL,
 * else the embedded one under DATA_DIR, which must not be running), and the NATS authority file
 * and issuer file (NATS_ISSUER, else DATA_DIR/nats-auth/authority.json, and the other of the two
 * beside it). Rotating the key:
 *
 *   1. SECRETS_KEY=<new> SECRETS_KEY_PREVIOUS=<old> on every worker process (they read both);
 *   2. SECRETS_KEY=<new> SECRETS_KEY_PREVIOUS=<old> npm run reseal;
 *   3. SECRETS_KEY_PREVIOUS unset everywhere.
 */
async function main(): Promise<void> {
  const config = loadConfig({ ROLE: 'all', ...process.env });
  const log = createLogger({ level: 'warn', format: config.logFormat, name: 'reseal' });
  const { ring } = await resolveKeyRing(config);
  const say = (line: string) => process.stdout.write(`reseal: ${line}\n`);

  const issuer = config.nats.issuer ?? path.join(config.dataDir, 'nats-auth', AuthorityFileName);
  if (!existsSync(issuer) && config.nats.issuer) throw new ConfigError(`NATS_ISSUER names ${issuer}, which does not exist`);
  // The file named and the other one of the pair beside it (authority.json and issuer.json), where they are.
  const natsFiles = [issuer, ...[AuthorityFileName, IssuerFileName].map((name) => path.join(path.dirname(issuer), name))];
  for (const file of new Set(natsFiles.map((f) => path.resolve(f)))) {
    if (!existsSync(file)) continue;
    const before = await authorityKeyIds(file);
    await resealAuthorityFile(file, ring);
    say(`NATS keys ${file}: sealed under key ${ring.currentId} (was ${before.join(', ')})`);
  }

  let databaseUrl = config.database.url;
  const embedded = databaseUrl ? undefined : await startEmbeddedPostgres({ dataDir: config.dataDir, log });
  databaseUrl ??= embedded!.url;
  const sql = connectPostgres({ url: databaseUrl, poolMax: 1, applicationName: 'checkout-platform-reseal' });
  try {
    await migrate(sql, await loadMigrations(), log);
    const counts = await resealStoredSecrets(sql, ring);
    say(`Postgres: ${Object.entries(counts).map(([place, n]) => `${n} ${place} secret${n === 1 ? '' : 's'}`).join(', ')} sealed under key ${ring.currentId}`);
  } finally {
    await sql.end();
    await embedded?.stop();
  }
  say(`done: every stored secret is sealed under ${ring.currentId}; SECRETS_KEY_PREVIOUS may go`);
}

main().catch((err: unknown) => {
  const message = err instanceof UnreadableSecretError || err instanceof ConfigError || err instanceof Error ? err.message : String(err);
  process.stderr.write(`reseal: ${message}\n`);
  process.exit(1);
});
