import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { revokeRoleKeys } from '../actors/integrations/nats-access.js';
import { ConfigError, loadConfig, type Config } from '../src/config.js';
import { systemCreds } from '../src/infra/nats-auth/authority.js';
import { ensureNatsAuth, renewRoleCreds, writeRenewedCreds, type NatsAuthFolder } from '../src/infra/nats-auth/authority-file.js';
import { roleAccount, Roles, type Role } from '../src/infra/nats-auth/permissions.js';
import { pushAccountJwt } from '../src/infra/nats-auth/push.js';
import { loadMigrations, migrate } from '../src/infra/migrate.js';
import { connectPostgres } from '../src/infra/postgres.js';
import { createLogger } from '../src/logger.js';
import { writePrivate } from '../src/infra/private-file.js';
import { natsServerConfig } from '../src/infra/nats-auth/server-config.js';
import { resolveKeyRing } from '../src/secrets/generated.js';

/**
 * npm run --silent nats-auth -- [--dir ./nats-auth] [--resolver-dir /data/accounts]
 *   [--cluster-name checkout --cluster-listen 0.0.0.0:6222 --routes nats-1:6222,nats-2:6222,nats-3:6222]
 *
 * The platform's NATS trust for an operator's own servers, as `npm start` makes it for its spawned
 * one (docs/operations.md, "The message plane"): in `--dir`, the sealed authority (authority.json,
 * sealed with SECRETS_KEY, identity keys included: it stays here), the workers' part of it
 * (issuer.json, their NATS_ISSUER: the signing keys they issue and revoke integrations' credentials
 * with), the users of each role (edge.creds, workers.creds, service.creds, admin.creds), and nats-server.conf,
 * which it also prints: what every node includes. With --routes, the routes between the nodes
 * authenticate (a password made once and kept in route-password). A second run keeps every key and
 * brings the role credentials to this version's permissions. `--renew <role>` gives a role's user a
 * new key and revokes the old one on the servers (a leaked credential; see renew below).
 */
const usage = [
  'usage: npm run --silent nats-auth -- [--dir ./nats-auth] [--resolver-dir /data/accounts] [--cluster-name <name> --cluster-listen <host:port> --routes <host:port,...>]',
  `       npm run --silent nats-auth -- --dir <dir> --renew <role>[,<role>...]   (roles: ${Roles.join(', ')}; with DATABASE_URL and NATS_URL)`,
].join('\n');

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      dir: { type: 'string', default: './nats-auth' },
      'resolver-dir': { type: 'string', default: '/data/accounts' },
      'cluster-name': { type: 'string', default: 'checkout' },
      'cluster-listen': { type: 'string', default: '0.0.0.0:6222' },
      routes: { type: 'string' },
      renew: { type: 'string', multiple: true },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return void process.stdout.write(`${usage}\n`);
  const config = loadConfig({ ROLE: 'all', ...process.env });
  const { ring, generated } = await resolveKeyRing(config);
  if (values.renew) return renew(config, await ensureNatsAuth(values.dir, ring), values.renew.flatMap((r) => r.split(',')).map((r) => r.trim()).filter(Boolean));
  const folder = await ensureNatsAuth(values.dir, ring);
  const cluster = values.routes ? { name: values['cluster-name'], listen: values['cluster-listen'], ...(await routeCredentials(folder.dir)), routes: values.routes.split(',').map((r) => r.trim()).filter(Boolean) } : undefined;
  const text = natsServerConfig(folder.authority, {
    resolverDir: values['resolver-dir'],
    ...(cluster ? { cluster: { ...cluster, routes: cluster.routes.map((route) => `nats-route://${cluster.user}:${cluster.password}@${route.replace(/^nats-route:\/\//, '')}`) } } : {}),
  });
  const confFile = path.join(folder.dir, 'nats-server.conf');
  await writePrivate(confFile, text);
  process.stdout.write(text);
  const say = (line: string) => process.stderr.write(`${line}\n`);
  say('');
  say(`nats-auth: ${folder.created ? 'made' : 'kept'} the operator and accounts in ${folder.dir} (every file readable by its owner only)`);
  say(`  ${confFile}: include it in every nats-server's configuration (printed above), with JetStream on; the resolver keeps accounts in ${values['resolver-dir']}`);
  say(`  edge processes:    NATS_CREDS=${folder.creds.edge}`);
  say(`  worker processes:  NATS_CREDS=${folder.creds.workers} NATS_ISSUER=${folder.issuerFile} and the same SECRETS_KEY`);
  say(`  npm start's shape: NATS_CREDS=${folder.creds.service} NATS_ISSUER=${folder.issuerFile}`);
  say(`  your own tools (nats CLI, npm run chaos): ${folder.creds.admin}; never give it to a service process or an integrator`);
  if (generated) say(`  SECRETS_KEY is unset: sealed with the key generated into ${generated.file}; set SECRETS_KEY to it wherever the workers run`);
}

/**
 * --renew: each role's user gets a new key (its .creds file written anew), and the key it held is
 * revoked on the servers: the revocation is recorded in Postgres (so that every account JWT issued
 * after it, an integration's revocation too, carries it) and pushed to NATS_URL, whose servers close
 * the connections made with the old key. Processes on this machine read their file again when they
 * reconnect; the file must be copied to wherever else the role runs. Run it again if the push fails:
 * the key it wrote is then renewed once more, and the old one stays revoked.
 */
async function renew(config: Config, folder: NatsAuthFolder, names: string[]): Promise<void> {
  const unknown = names.filter((name) => !(Roles as readonly string[]).includes(name));
  if (unknown.length || !names.length) throw new ConfigError(`--renew takes roles among ${Roles.join(', ')}; got ${names.join(', ') || 'none'}`);
  if (!config.nats.url || !config.database.url) {
    throw new ConfigError('--renew needs DATABASE_URL (where revocations are recorded) and NATS_URL (the servers that must take the revocation)');
  }
  const renewed = await Promise.all([...new Set(names as Role[])].map((role) => renewRoleCreds(folder, role)));
  const sql = connectPostgres({ url: config.database.url, poolMax: 1, applicationName: 'checkout-platform-nats-auth' });
  let jwts: string[];
  const accountOf = (role: Role) => (roleAccount(role) === 'edge' ? folder.authority.edgeAccount.publicKey : folder.authority.account.publicKey);
  try {
    await migrate(sql, await loadMigrations(), createLogger({ level: 'warn', format: config.logFormat, name: 'nats-auth' }));
    jwts = await revokeRoleKeys(sql, folder.authority, renewed.flatMap((r) => (r.replacedKey ? [{ role: r.role, userKey: r.replacedKey, account: accountOf(r.role) }] : [])));
  } finally {
    await sql.end();
  }
  for (const role of renewed) await writeRenewedCreds(role);
  try {
    for (const jwt of jwts) await pushAccountJwt({ servers: config.nats.url, systemCreds: systemCreds(folder.authority), ...(config.nats.tls ? { tls: config.nats.tls } : {}) }, jwt);
  } catch (err) {
    throw new Error(`the new credentials are written and the old keys recorded as revoked, but the NATS servers did not take the revocation (${(err as Error).message}): run the same command again once they answer`, { cause: err });
  }
  for (const { role, file, replacedKey } of renewed) {
    process.stdout.write(`nats-auth: ${role}: ${file} holds a new key; ${replacedKey ? `the old one (${replacedKey}) is revoked on the servers, and their connections with it are closed` : 'it held none before'}\n`);
  }
  process.stdout.write('nats-auth: processes on this machine take the new file when they reconnect; copy it to wherever else these roles run (their processes, refused, exit and take it when started again)\n');
}

/** The route user and password, made once and kept beside the authority. */
async function routeCredentials(dir: string): Promise<{ user: string; password: string }> {
  const file = path.join(dir, 'route-password');
  let password = (await readFile(file, 'utf8').catch(() => '')).trim();
  if (!password) {
    password = randomBytes(24).toString('base64url');
    await writePrivate(file, `${password}\n`);
  }
  return { user: 'route', password };
}

main().catch((err: unknown) => {
  process.stderr.write(`nats-auth: ${err instanceof ConfigError || err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
