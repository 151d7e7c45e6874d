import t from 'tap';
import { ConfigError, loadConfig } from '../src/config.js';

t.test('has the defaults docs/operations.md states', async (t) => {
  const config = loadConfig({});
  t.match(config, {
    env: 'development',
    role: 'all',
    http: { host: '127.0.0.1', port: 8080, tls: undefined },
    database: { url: undefined, poolMax: 10 },
    nats: { url: undefined },
    dataDir: './data',
    auth: { jwtSecret: undefined, jwksUrl: undefined, issuer: 'checkout-platform', audience: 'checkout-platform' },
    logLevel: 'info',
    requestTimeoutMs: 5000,
    embedded: { maxRestarts: 5 },
  });
});

t.test('treats an empty variable as unset', async (t) => {
  const config = loadConfig({ PORT: '', DATABASE_URL: '', JWT_SECRET: '', LOG_LEVEL: '' });
  t.equal(config.http.port, 8080);
  t.equal(config.database.url, undefined);
  t.equal(config.auth.jwtSecret, undefined);
  t.equal(config.logLevel, 'info');
});

t.test('refuses what cannot work, naming the variable', async (t) => {
  const cases: Array<[Record<string, string>, RegExp]> = [
    [{ PORT: '70000' }, /PORT/],
    [{ EMBEDDED_MAX_RESTARTS: '-1' }, /EMBEDDED_MAX_RESTARTS/],
    [{ ROLE: 'both' }, /ROLE/],
    [{ JWT_SECRET: 'short' }, /JWT_SECRET: must be at least 32 characters/],
    [{ JWKS_URL: 'not a url' }, /JWKS_URL/],
    [{ TLS_CERT_FILE: '/cert.pem' }, /TLS_CERT_FILE and TLS_KEY_FILE must be set together/],
    [{ ROLE: 'edge' }, /NATS_URL is required when ROLE is edge or workers/],
    [{ ROLE: 'workers', NATS_URL: 'nats://x:4222' }, /DATABASE_URL is required when ROLE is workers/],
  ];
  for (const [env, message] of cases) t.throws(() => loadConfig(env), { name: 'ConfigError', message }, JSON.stringify(env));
  t.ok(new ConfigError('x') instanceof Error);
});

t.test('reads TLS, roles and timeouts', async (t) => {
  const config = loadConfig({ ROLE: 'edge', NATS_URL: 'nats://a:4222,nats://b:4222', TLS_CERT_FILE: 'c', TLS_KEY_FILE: 'k', REQUEST_TIMEOUT_MS: '1500' });
  t.same(config.http.tls, { certFile: 'c', keyFile: 'k' });
  t.equal(config.role, 'edge');
  t.equal(config.requestTimeoutMs, 1500);
});
