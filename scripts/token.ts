import { parseArgs } from 'node:util';
import { isPermission, Permissions, type Permission } from '../src/auth/permissions.js';
import { resolveJwtSecret } from '../src/secrets/generated.js';
import { signToken } from '../src/auth/tokens.js';
import { ConfigError, loadConfig } from '../src/config.js';

/**
 * npm run --silent token -- --project <id> --permissions <a,b,...|all> [--sub <id>] [--ttl 1h]
 * Prints a token signed with JWT_SECRET (or the secret generated into the data directory).
 */
const usage = 'usage: npm run --silent token -- --project <id> --permissions <a,b,...|all> [--sub <id>] [--ttl 1h] [--app-user-id <id>] [--client-id <id>]';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      project: { type: 'string' },
      permissions: { type: 'string' },
      sub: { type: 'string' },
      ttl: { type: 'string', default: '1h' },
      'app-user-id': { type: 'string' },
      'client-id': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return void process.stdout.write(`${usage}\npermissions: ${Permissions.join(', ')}\n`);
  if (!values.project || !values.permissions) throw new ConfigError(usage);
  if (!/^\d+[smhdw]$/.test(values.ttl)) throw new ConfigError(`--ttl must be a number with s, m, h, d or w, such as 1h (got ${values.ttl})`);

  const config = loadConfig();
  const { secret } = await resolveJwtSecret(config);
  if (!secret) throw new ConfigError('JWT_SECRET is not set: with JWKS_URL alone, tokens come from your identity provider');

  const token = await signToken(
    {
      project: values.project,
      permissions: parsePermissions(values.permissions),
      sub: values.sub,
      appUserID: values['app-user-id'],
      clientID: values['client-id'],
      ttl: values.ttl,
    },
    { secret, issuer: config.auth.issuer, audience: config.auth.audience },
  );
  process.stdout.write(`${token}\n`);
}

function parsePermissions(list: string): Permission[] {
  if (list.trim() === 'all') return [...Permissions];
  const names = list.split(',').map((p) => p.trim()).filter(Boolean);
  const unknown = names.filter((n) => !isPermission(n));
  if (unknown.length) throw new ConfigError(`unknown permission ${unknown.join(', ')}; known: ${Permissions.join(', ')}`);
  return names as Permission[];
}

main().catch((err: unknown) => {
  process.stderr.write(`token: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
