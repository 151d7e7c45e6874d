import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../src/config.js';
import { ensureNatsAuth } from '../src/infra/nats-auth/authority-file.js';
import { writePrivate } from '../src/infra/private-file.js';
import { natsServerConfig } from '../src/infra/nats-auth/server-config.js';
import { resolveKeyRing } from '../src/secrets/generated.js';

/**
 * npm run --silent nats-auth -- [--dir ./nats-auth] [--resolver-dir /data/accounts]
 *   [--cluster-name checkout --cluster-listen 0.0.0.0:6222 --routes nats-1:6222,nats-2:6222,nats-3:6222]
 *
 * The platform's NATS trust for an operator's own servers, as `npm start` makes it for its spawned
 * one (docs/operations.md, "The message plane"): in `--dir`, the sealed authority (authority.json,
 * sealed with SECRETS_KEY: the workers issue and revoke integrations' credentials with it), the
 * users of each role (edge.creds, workers.creds, service.creds, admin.creds), and nats-server.conf,
 * which it also prints: what every node includes. With --routes, the routes between the nodes
 * authenticate (a password made once and kept in route-password). A second run keeps every key and
 * brings the role credentials to this version's permissions.
 */
const usage =
  'usage: npm run --silent nats-auth -- [--dir ./nats-auth] [--resolver-dir /data/accounts] [--cluster-name <name> --cluster-listen <host:port> --routes <host:port,...>]';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      dir: { type: 'string', default: './nats-auth' },
      'resolver-dir': { type: 'string', default: '/data/accounts' },
      'cluster-name': { type: 'string', default: 'checkout' },
      'cluster-listen': { type: 'string', default: '0.0.0.0:6222' },
      routes: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return void process.stdout.write(`${usage}\n`);
  const config = loadConfig({ ROLE: 'all', ...process.env });
  const { ring, generated } = await resolveKeyRing(config);
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
  say(`  worker processes:  NATS_CREDS=${folder.creds.workers} NATS_ISSUER=${folder.authorityFile} and the same SECRETS_KEY`);
  say(`  npm start's shape: NATS_CREDS=${folder.creds.service} NATS_ISSUER=${folder.authorityFile}`);
  say(`  your own tools (nats CLI, npm run chaos): ${folder.creds.admin}; never give it to a service process or an integrator`);
  if (generated) say(`  SECRETS_KEY is unset: sealed with the key generated into ${generated.file}; set SECRETS_KEY to it wherever the workers run`);
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
