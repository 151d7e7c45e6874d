import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { signToken } from '../src/auth/tokens.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { startService } from '../service/start.js';
import { p, seedCheckout } from './support/checkout.js';
import { png } from './support/coupon-images.js';
import { createHttpClient, type HttpClient, type HttpResponse } from './support/http.js';
import { PasswordHashingEnv, startMoreEdge, startTestService, TestCheckoutSecret, TestProject, TestSecret } from './support/service.js';

/**
 * Security headers on every answer, and the throttling of failed sign-ins (per client address and
 * per credential, shared by the edges over NATS) and of tokens (when an operator sets a limit).
 * Each test signs in from addresses of its own (X-Forwarded-For, TRUST_PROXY=true), as clients
 * behind a load balancer do, so that one test's blocked address is not another's.
 */
const Limit = 3;
const WindowMs = 3000;
const throttleEnv = { TRUST_PROXY: 'true', AUTH_FAILURE_LIMIT: String(Limit), AUTH_FAILURE_WINDOW_MS: String(WindowMs) };
const svc = await startTestService(t, { env: { ...throttleEnv, ...PasswordHashingEnv } });
const fx = await seedCheckout(svc);
const admin = await svc.token(['projectsWrite', 'shopsRead', 'shopsWrite']);

const credential = async (name: string) => {
  const res = await svc.request('POST', `${p}/pos/credentials`, { token: admin, body: { name, permissions: ['checkoutRead'] } });
  t.equal(res.status, 201, res.text);
  return res.body as { user: string; password: string };
};
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const processId: string = (await fx.processIn('pending')).id;
let nextAddress = 1;
const address = () => `198.51.100.${nextAddress++}`;

const posGet = (edge: HttpClient, from: string, authorization: string) =>
  edge.request('GET', `${p}/pos/checkout/id/${processId}`, { headers: { authorization, 'x-forwarded-for': from } });
const shopsGet = (edge: HttpClient, from: string, token: string) => edge.request('GET', `${p}/shops`, { token, headers: { 'x-forwarded-for': from } });
const forgedToken = (sub?: string) =>
  signToken({ project: TestProject, permissions: ['shopsRead'], sub }, { secret: 'a-secret-that-is-not-the-edge-secret-0123456789', issuer: 'checkout-platform', audience: 'checkout-platform' });

function assertTooMany(t: Test, res: HttpResponse, what: string, windowMs = WindowMs) {
  t.equal(res.status, 429, `${what}: ${res.text}`);
  t.equal(res.body.type, 'too_many_requests');
  const retryAfter = Number(res.headers.get('retry-after'));
  t.ok(retryAfter >= 1 && retryAfter <= windowMs / 1000, `Retry-After ${res.headers.get('retry-after')} is within the window`);
  t.equal(res.headers.get('x-content-type-options'), 'nosniff', 'a 429 carries the security headers too');
}

function assertSecurityHeaders(t: Test, res: HttpResponse, what: string) {
  t.equal(res.headers.get('x-content-type-options'), 'nosniff', `${what}: nosniff`);
  t.equal(res.headers.get('referrer-policy'), 'no-referrer', `${what}: no referrer`);
  t.equal(res.headers.get('x-frame-options'), 'DENY', `${what}: no framing`);
  t.equal(res.headers.get('strict-transport-security'), null, `${what}: no HSTS without TLS`);
}

function assertDataPolicy(t: Test, res: HttpResponse, what: string) {
  const csp = res.headers.get('content-security-policy') ?? '';
  t.match(csp, /default-src 'none'/, `${what}: loads nothing`);
  t.match(csp, /frame-ancestors 'none'/, `${what}: framed by nothing`);
}

t.test('an authenticated API answer carries the security headers, the data policy and no-store', async (t) => {
  const res = await svc.request('GET', `${p}/shops`, { token: admin });
  t.equal(res.status, 200, res.text);
  assertSecurityHeaders(t, res, 'GET shops');
  assertDataPolicy(t, res, 'GET shops');
  t.equal(res.headers.get('cache-control'), 'no-store', "a token's data is not cached");
});

t.test('routes with caching of their own keep it: a coupon revalidates by ETag, a coupon image is cached for a year', async (t) => {
  const writer = await svc.token(['couponsRead', 'couponsWrite']);
  const image = await fetch(`${svc.url}${p}/coupons/images`, { method: 'POST', headers: { authorization: `Bearer ${writer}`, 'content-type': 'image/png' }, body: png(20, 10) });
  const { ref } = (await image.json()) as { ref: string };
  const imageRes = await svc.request('GET', `${p}/coupons/images/${ref}`);
  t.equal(imageRes.status, 200);
  t.equal(imageRes.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  t.equal(imageRes.headers.get('cross-origin-resource-policy'), 'cross-origin', 'pages of other origins may show it');
  t.equal(imageRes.headers.get('x-content-type-options'), 'nosniff');

  const created = await svc.request('POST', `${p}/coupons`, { token: writer, body: { id: 'cached-10', name: 'Ten off', channels: ['app'], type: 'manual' } });
  t.equal(created.status, 201, created.text);
  const coupon = await svc.request('GET', `${p}/coupons/cached-10`, { token: writer });
  t.equal(coupon.headers.get('cache-control'), 'private, no-cache', 'kept by the client only, and asked for again');
  const again = await svc.request('GET', `${p}/coupons/cached-10`, { token: writer, headers: { 'if-none-match': coupon.headers.get('etag') ?? '' } });
  t.equal(again.status, 304, 'If-None-Match still saves the body');
});

t.test('an edge that serves TLS sends Strict-Transport-Security', async (t) => {
  const dir = svc.config.dataDir;
  const [certFile, keyFile] = [path.join(dir, 'edge.crt'), path.join(dir, 'edge.key')];
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1', '-keyout', keyFile, '-out', certFile], { stdio: 'ignore' });
  const tlsEdge = await startMoreEdge(t, svc, { TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile });
  t.match(tlsEdge.url, /^https:/);
  // inject: the answer as the edge builds it, without a client that must trust the certificate.
  const res = await tlsEdge.service.edge!.inject({ method: 'GET', url: '/health' });
  t.match(res.headers['strict-transport-security'], /max-age=31536000/);
  t.equal(res.headers['x-content-type-options'], 'nosniff');
});

t.test('error answers (400, 403, 404, 405) carry the security headers and the data policy', async (t) => {
  const answers: Array<[string, HttpResponse, number]> = [
    ['a body that fails validation', await svc.request('POST', `${p}/shops`, { token: admin, body: { id: 42 } }), 400],
    ['no token', await svc.request('GET', `${p}/shops`), 403],
    ['no route', await svc.request('GET', '/no/such/route'), 404],
    ['a wrong method', await svc.request('PATCH', '/health'), 405],
  ];
  for (const [what, res, status] of answers) {
    t.equal(res.status, status, `${what}: ${res.text}`);
    assertSecurityHeaders(t, res, what);
    assertDataPolicy(t, res, what);
  }
});

t.test('/health and /openapi.json carry the security headers; nothing public is marked no-store', async (t) => {
  for (const path of ['/health', '/openapi.json']) {
    const res = await svc.request('GET', path);
    t.equal(res.status, 200, path);
    assertSecurityHeaders(t, res, path);
    assertDataPolicy(t, res, path);
    t.not(res.headers.get('cache-control'), 'no-store', `${path} carries no token's data`);
  }
});

t.test('/docs gets a strict page policy: its own scripts and styles only, no inline script', async (t) => {
  const page = await svc.request('GET', '/docs/');
  t.equal(page.status, 200);
  t.match(page.text, /<script src=/);
  t.notMatch(page.text, /<script>|<script [^>]*>\s*[^<\s]/, 'the page has no inline script for the policy to forbid');
  assertSecurityHeaders(t, page, '/docs');
  const csp = page.headers.get('content-security-policy') ?? '';
  t.match(csp, /default-src 'none'/);
  t.match(csp, /script-src 'self'(;|$)/);
  t.match(csp, /style-src 'self'(;|$)/);
  t.match(csp, /connect-src 'self'/, 'the page may fetch the document from the edge');
  t.match(csp, /frame-ancestors 'none'/);
  t.notMatch(csp, /unsafe-inline|unsafe-eval/);
  const initializer = await svc.request('GET', '/docs/static/swagger-initializer.js');
  t.equal(initializer.status, 200);
  t.equal(initializer.headers.get('x-content-type-options'), 'nosniff');
  t.match(initializer.text, /openapi|json/, 'the initializer the page loads is served');
});

t.test('after the limit of wrong PoS passwords, even the right one is 429 with Retry-After until the window passes', async (t) => {
  const { user, password } = await credential('Kasse throttled');
  const from = address();
  let firstFailure = 0;
  for (let i = 0; i < Limit; i++) {
    const res = await posGet(svc, from, basic(user, `wrong-${i}`));
    firstFailure ||= Date.now();
    t.equal(res.status, 403, `wrong password ${i + 1} is 403`);
  }
  assertTooMany(t, await posGet(svc, from, basic(user, 'wrong-again')), 'one more wrong password');
  assertTooMany(t, await posGet(svc, from, basic(user, password)), 'the right password');
  assertTooMany(t, await posGet(svc, address(), basic(user, password)), 'the right password from another address (the credential is blocked)');

  await sleep(firstFailure + WindowMs + 200 - Date.now());
  const after = await posGet(svc, from, basic(user, password));
  t.equal(after.status, 200, `the window passed: signed in again (${after.text})`);
  t.equal((await posGet(svc, from, basic(user, 'wrong-after'))).status, 403, 'a new window counts from zero');
});

t.test('wrong passwords of one credential from many addresses block that credential', async (t) => {
  const { user, password } = await credential('Kasse guessed');
  for (let i = 0; i < Limit; i++) t.equal((await posGet(svc, address(), basic(user, `wrong-${i}`))).status, 403);
  assertTooMany(t, await posGet(svc, address(), basic(user, password)), 'the right password from a fresh address');
});

t.test('successful sign-ins are never counted, and others are not slowed by a blocked address or credential', async (t) => {
  const { user, password } = await credential('Kasse busy');
  const other = await credential('Kasse bystander');
  const from = address();
  for (let i = 0; i < Limit * 3; i++) t.equal((await posGet(svc, from, basic(user, password))).status, 200, `success ${i + 1}`);
  for (let i = 0; i < Limit - 1; i++) t.equal((await posGet(svc, from, basic(user, `wrong-${i}`))).status, 403);
  t.equal((await posGet(svc, from, basic(user, password))).status, 200, 'below the limit after many successes: still signs in');

  // An attacker blocks their own address and another credential...
  const attacker = address();
  const victim = await credential('Kasse attacked');
  for (let i = 0; i < Limit; i++) await posGet(svc, attacker, basic(victim.user, `wrong-${i}`));
  assertTooMany(t, await posGet(svc, attacker, basic(other.user, other.password)), "the attacker's address");
  // ...and nobody else notices.
  t.equal((await posGet(svc, address(), basic(other.user, other.password))).status, 200, 'another credential from another address');
  t.equal((await shopsGet(svc, address(), admin)).status, 200, 'a token from another address');
});

t.test('after the limit of bad bearer tokens, a good token is 429 from that address and for that sub until the window passes', async (t) => {
  const from = address();
  let firstFailure = 0;
  for (let i = 0; i < Limit; i++) {
    const res = await shopsGet(svc, from, await forgedToken(`forged-${i}`));
    firstFailure ||= Date.now();
    t.equal(res.status, 403);
    t.equal(res.body.type, 'forbidden');
  }
  const good = await svc.token(['shopsRead'], { sub: 'integrator-1' });
  assertTooMany(t, await shopsGet(svc, from, good), 'a good token from the blocked address');
  t.equal((await shopsGet(svc, address(), good)).status, 200, 'the same token from another address');

  // Forged tokens naming a sub, each from another address, block that sub.
  for (let i = 0; i < Limit; i++) t.equal((await shopsGet(svc, address(), await forgedToken('integrator-2'))).status, 403);
  const victim = await svc.token(['shopsRead'], { sub: 'integrator-2' });
  assertTooMany(t, await shopsGet(svc, address(), victim), 'a good token of the blocked sub');

  t.equal((await shopsGet(svc, address(), await svc.token(['projectsWrite']))).status, 403, 'a valid token that lacks a permission is refused...');
  const lacking = address();
  for (let i = 0; i < Limit + 1; i++) t.equal((await shopsGet(svc, lacking, await svc.token(['projectsWrite']))).status, 403, '...and not counted');

  await sleep(firstFailure + WindowMs + 200 - Date.now());
  t.equal((await shopsGet(svc, from, good)).status, 200, 'the window passed: the address signs in again');
});

t.test('two edges on one NATS share the failure counts', async (t) => {
  const second = await startMoreEdge(t, svc, throttleEnv);
  const { user, password } = await credential('Kasse behind two edges');
  const from = address();
  t.equal((await posGet(svc, from, basic(user, 'wrong-1'))).status, 403, 'failure 1 through the first edge');
  t.equal((await posGet(second, from, basic(user, 'wrong-2'))).status, 403, 'failure 2 through the second edge');
  t.equal((await posGet(svc, from, basic(user, 'wrong-3'))).status, 403, 'failure 3 through the first edge');
  // The counts are shared at once (compare-and-set on the bucket); an edge learns of a block through
  // the bucket's watch, a moment after another edge counted it (milliseconds; longer on a loaded
  // machine). Until then the right password signs in, which counts nothing.
  let blocked = await posGet(second, from, basic(user, password));
  for (const deadline = Date.now() + 2000; blocked.status !== 429 && Date.now() < deadline; ) {
    await sleep(50);
    blocked = await posGet(second, from, basic(user, password));
  }
  assertTooMany(t, blocked, 'the right password through the second edge');
  assertTooMany(t, await posGet(second, address(), basic(user, password)), 'the credential from another address through the second edge');
  t.equal((await posGet(second, address(), basic(user, 'x'))).status, 429, 'blocked before the worker is asked');
});

t.test('wrong current passwords of a portal password change count like failed sign-ins: past the limit 429, the right one too, from any address', async (t) => {
  const created = await svc.request('POST', `${p}/portal/accounts`, { token: admin, body: { email: 'changer@example.com', role: 'backoffice' } });
  t.equal(created.status, 201, created.text);
  // Each guess costs a scrypt at N = 2^17, seconds on a loaded machine: an edge whose window outlasts them.
  const longWindowMs = 60_000;
  const edge = await startMoreEdge(t, svc, { ...throttleEnv, ...PasswordHashingEnv, AUTH_FAILURE_WINDOW_MS: String(longWindowMs) });
  const origin = new URL(edge.url).origin;
  const signIn = await edge.request('POST', '/portal/api/session', { body: { project: TestProject, email: 'changer@example.com', password: created.body.password }, headers: { 'x-forwarded-for': address() } });
  const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0]!;
  const change = (from: string, currentPassword: string) =>
    edge.request('PUT', '/portal/api/session/password', { headers: { cookie, origin, 'x-forwarded-for': from }, body: { currentPassword, newPassword: 'a-chosen-password-1' } });
  // Each guess from an address of its own: the account's credential is what is blocked.
  for (let i = 0; i < Limit; i++) t.equal((await change(address(), `wrong-${i}`)).status, 403, `wrong current password ${i + 1} is 403`);
  assertTooMany(t, await change(address(), created.body.password), 'the right current password from a fresh address', longWindowMs);
  const [row] = await svc.sql<{ password_change_required: boolean }[]>`select password_change_required from portal_accounts where email = 'changer@example.com'`;
  t.equal(row?.password_change_required, true, 'the password was not changed');
});

t.test('a per-token request limit, when an operator sets one, answers 429 with Retry-After and RateLimit headers', async (t) => {
  const limited = await startMoreEdge(t, svc, { TOKEN_RATE_LIMIT: '3', TOKEN_RATE_WINDOW_MS: String(WindowMs) });
  const token = await svc.token(['shopsRead'], { sub: 'busy-client' });
  for (let i = 0; i < 3; i++) {
    const res = await limited.request('GET', `${p}/shops`, { token });
    t.equal(res.status, 200, res.text);
    t.equal(res.headers.get('x-ratelimit-limit'), '3');
    t.equal(res.headers.get('x-ratelimit-remaining'), String(2 - i));
  }
  const refused = await limited.request('GET', `${p}/shops`, { token });
  t.equal(refused.status, 429, refused.text);
  t.equal(refused.body.type, 'too_many_requests');
  t.ok(Number(refused.headers.get('retry-after')) >= 1, 'Retry-After');
  t.equal(refused.headers.get('x-ratelimit-remaining'), '0');
  t.equal((await limited.request('GET', `${p}/shops`, { token: await svc.token(['shopsRead'], { sub: 'calm-client' }) })).status, 200, 'another token is not limited');
  t.equal((await limited.request('GET', '/health')).headers.get('x-ratelimit-limit'), null, 'public routes are not counted');
  t.equal((await svc.request('GET', `${p}/shops`, { token })).headers.get('x-ratelimit-limit'), null, 'off by default (the first edge)');
});

t.test('a process that spawned its own NATS counts failures in its memory', async (t) => {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'cp-edge-memory-'));
  const config = loadConfig({
    NODE_ENV: 'test',
    ROLE: 'all',
    DATABASE_URL: svc.databaseUrl,
    DATABASE_POOL_MAX: '2',
    JWT_SECRET: TestSecret,
    CHECKOUT_SIGNING_SECRET: TestCheckoutSecret,
    CLOSING_SCHEDULER_ENABLED: 'false',
    HOST: '127.0.0.1',
    PORT: '0',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    AUTH_FAILURE_LIMIT: '2',
    AUTH_FAILURE_WINDOW_MS: String(WindowMs),
  });
  t.equal(config.nats.url, undefined, 'no NATS_URL: the process spawns its own');
  const own = await startService(config, createLogger({ level: 'silent' }));
  t.teardown(async () => {
    await own.stop();
    await rm(dataDir, { recursive: true, force: true });
  });
  const edge = createHttpClient(own.url ?? '');
  for (let i = 0; i < 2; i++) t.equal((await edge.request('GET', `${p}/shops`, { token: await forgedToken() })).status, 403);
  assertTooMany(t, await edge.request('GET', `${p}/shops`, { token: admin }), 'a good token from the blocked address');
});
