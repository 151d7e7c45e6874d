import { existsSync } from 'node:fs';
import path from 'node:path';
import { resealStoredSecrets } from '../actors/secrets-at-rest.js';
import { ConfigError, loadConfig } from '../src/config.js';
import { startEmbeddedPostgres } from '../src/infra/embedded-postgres.js';
import { authorityKeyIds, resealAuthorityFile } from '../src/infra/nats-auth/authority-file.js';
import { loadMigrations, migrate } from '../src/infra/migrate.js';
import { connectPostgres } from '../src/infra/postgres.js';
import { createLogger } from '../src/logger.js';
import { resolveKeyRing } from '../src/secrets/generated.js';
import { UnreadableSecretError } from '../src/secrets/key-ring.js';

/**
 * npm run reseal: seals every stored secret anew under SECRETS_KEY, opening what the key before
 * sealed with SECRETS_KEY_PREVIOUS: the TSE secrets and webhook secrets in Postgres (DATABASE_URL,
 * else the embedded one under DATA_DIR, which must not be running), and the NATS authority file
 * (NATS_ISSUER, else DATA_DIR/nats-auth/authority.json). Rotating the key:
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

  const issuer = config.nats.issuer ?? path.join(config.dataDir, 'nats-auth', 'authority.json');
  if (existsSync(issuer)) {
    const before = await authorityKeyIds(issuer);
    await resealAuthorityFile(issuer, ring);
    say(`NATS authority ${issuer}: sealed under key ${ring.currentId} (was ${before.join(', ')})`);
  } else if (config.nats.issuer) {
    throw new ConfigError(`NATS_ISSUER names ${issuer}, which does not exist`);
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
