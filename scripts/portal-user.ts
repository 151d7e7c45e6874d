import { parseArgs } from 'node:util';
import { signToken } from '../src/auth/tokens.js';
import { ConfigError, loadConfig, type Config } from '../src/config.js';
import { resolveJwtSecret } from '../src/secrets/generated.js';
import { PortalRoles } from '../subjects/portal-accounts.js';

/**
 * npm run --silent portal-user -- --project <id> --email <e> [--role owner] [--reset] [--url http://127.0.0.1:8080]
 *
 * Creates a portal account through the running service's API (the first owner of a project, who
 * then manages the others in the portal) and prints its one-time password: signing in with it only
 * allows choosing a new one. `--reset` gives an existing account a new one-time password instead
 * (and unlocks it). It signs a short-lived token with JWT_SECRET (or the secret generated into the
 * data directory), as `npm run token` does.
 */
const usage = `usage: npm run --silent portal-user -- --project <id> --email <e> [--role ${PortalRoles.join('|')}] [--reset] [--url <edge url>]`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      project: { type: 'string' },
      email: { type: 'string' },
      role: { type: 'string', default: 'owner' },
      reset: { type: 'boolean', default: false },
      url: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return void process.stdout.write(`${usage}\n`);
  const { project, email, role } = values;
  if (!project || !email) throw new ConfigError(usage);
  if (!(PortalRoles as readonly string[]).includes(role)) throw new ConfigError(`--role must be one of ${PortalRoles.join(', ')} (got ${role})`);

  const config = loadConfig();
  const { secret } = await resolveJwtSecret(config);
  if (!secret) throw new ConfigError('JWT_SECRET is not set: with JWKS_URL alone, use a token of your identity provider with projectsWrite and POST /{project}/portal/accounts');
  const token = await signToken({ project, permissions: ['projectsWrite'], sub: 'portal-user-cli', ttl: '5m' }, { secret, issuer: config.auth.issuer, audience: config.auth.audience });
  const base = `${(values.url ?? edgeUrl(config)).replace(/\/+$/, '')}/${encodeURIComponent(project)}/portal/accounts`;
  const call = async (method: string, url: string, body?: unknown) => {
    let response: Response;
    try {
      response = await fetch(url, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    } catch (err) {
      throw new Error(`cannot reach the service at ${url} (is it running? --url says where)`, { cause: err });
    }
    const answer = (await response.json()) as Record<string, unknown>;
    if (!response.ok) throw new Error(`${response.status} ${String(answer.type)}: ${String(answer.message)}`);
    return answer;
  };

  let answer: Record<string, unknown>;
  if (values.reset) {
    const { accounts } = (await call('GET', base)) as { accounts: Array<{ id: string; email: string }> };
    const account = accounts.find((a) => a.email.toLowerCase() === email.toLowerCase());
    if (!account) throw new Error(`no portal account ${email} in project ${project}`);
    answer = await call('PATCH', `${base}/${account.id}`, { resetPassword: true });
  } else {
    answer = await call('POST', base, { email, role });
  }
  process.stderr.write(`portal-user: ${values.reset ? 'reset' : 'created'} ${email} (${role}) in ${project}; the one-time password follows\n`);
  process.stdout.write(`${String(answer.password)}\n`);
}

/** Where this machine's service listens, from the same configuration it starts with. */
function edgeUrl(config: Config): string {
  if (config.publicBaseUrl) return config.publicBaseUrl;
  const host = config.http.host === '0.0.0.0' || config.http.host === '::' ? '127.0.0.1' : config.http.host;
  return `${config.http.tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${config.http.port}`;
}

main().catch((err: unknown) => {
  process.stderr.write(`portal-user: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
