import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { projectRoot } from '../src/infra/project-root.js';
import { p } from './support/checkout.js';
import { hashPassword } from '../actors/pos-credentials/password.js';
import { PasswordHashingEnv, startMoreEdge, startTestService, TestProject, TestSecret } from './support/service.js';

/**
 * Portal accounts and sessions over HTTP: the CLI makes the first owner, a one-time password only
 * lets its holder choose a new one, the session cookie is accepted where a bearer token is (with the
 * role's permissions, for its project only), writes with it need the edge's Origin, five failed
 * sign-ins lock an account for 15 minutes, sessions end by sign-out, expiry and deletion.
 */
const svc = await startTestService(t, { env: PasswordHashingEnv });
const admin = await svc.token(['projectsWrite']);
const origin = new URL(svc.url).origin;
const run = promisify(execFile);

interface Browser {
  cookie: string;
  request(method: string, path: string, options?: { body?: unknown; origin?: string | null }): Promise<any>;
}

/** A client that keeps the session cookie as a browser would, sending the edge's Origin on writes unless told otherwise. */
async function signIn(email: string, password: string, project = TestProject): Promise<{ res: any; browser: Browser }> {
  const res = await svc.request('POST', '/portal/api/session', { body: { project, email, password }, headers: { origin } });
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const browser: Browser = {
    cookie,
    request: (method, path, options = {}) => {
      const headers: Record<string, string> = { cookie: browser.cookie };
      const sendOrigin = options.origin === undefined ? (method === 'GET' ? null : origin) : options.origin;
      if (sendOrigin) headers.origin = sendOrigin;
      return svc.request(method, path, { headers, body: options.body });
    },
  };
  return { res, browser };
}

async function accountWithPassword(email: string, role: string, password = 'a-good-password-1'): Promise<Browser> {
  const created = await svc.request('POST', `${p}/portal/accounts`, { token: admin, body: { email, role } });
  if (created.status !== 201) throw new Error(created.text);
  const { browser } = await signIn(email, created.body.password);
  const changed = await browser.request('PUT', '/portal/api/session/password', { body: { currentPassword: created.body.password, newPassword: password } });
  if (changed.status !== 200) throw new Error(changed.text);
  return browser;
}

t.test('the CLI creates the first owner and prints a one-time password that only allows choosing a new one', async (t) => {
  const script = path.join(projectRoot(), 'dist/scripts/portal-user.js');
  const { stdout } = await run(process.execPath, [script, '--project', TestProject, '--email', 'Owner@Example.com', '--role', 'owner', '--url', svc.url], {
    env: { ...process.env, JWT_SECRET: TestSecret, DATA_DIR: svc.config.dataDir },
  });
  const oneTime = stdout.trim();
  t.ok(oneTime.length >= 40, 'a long random password alone on stdout');
  const [fresh] = await svc.sql<{ password_hash: string }[]>`select password_hash from portal_accounts where lower(email) = 'owner@example.com'`;
  t.match(fresh?.password_hash, /^scrypt\$131072\$8\$1\$/, 'the one-time password is hashed at the cost of a chosen one: a wrong password costs every account the same time');

  const { res, browser } = await signIn('owner@example.com', oneTime);
  t.equal(res.status, 200, res.text);
  t.match(res.body, { project: TestProject, account: { email: 'Owner@Example.com', role: 'owner', passwordChangeRequired: true }, permissions: [] });
  const setCookie = res.headers.get('set-cookie') ?? '';
  t.match(setCookie, /^portal_session=[A-Za-z0-9_-]{40,}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+$/, 'HttpOnly, SameSite=Strict, no Secure over plain HTTP');
  const early = await browser.request('GET', `${p}/settings`);
  t.equal(early.status, 403, 'nothing before the one-time password is replaced, not even what any token reads');
  t.match(early.body.message, /new password/);

  const weak = await browser.request('PUT', '/portal/api/session/password', { body: { currentPassword: oneTime, newPassword: 'short' } });
  t.equal(weak.status, 400);
  const wrong = await browser.request('PUT', '/portal/api/session/password', { body: { currentPassword: 'not it at all', newPassword: 'owner-password-1' } });
  t.equal(wrong.status, 403);
  const changed = await browser.request('PUT', '/portal/api/session/password', { body: { currentPassword: oneTime, newPassword: 'owner-password-1' } });
  t.equal(changed.status, 200, changed.text);
  t.equal(changed.body.account.passwordChangeRequired, false);
  t.ok(changed.body.permissions.includes('projectsWrite'), 'an owner holds every permission');
  t.equal((await browser.request('GET', `${p}/settings`)).status, 200, 'the same session now reads what a token with the permissions reads');
  t.equal((await signIn('owner@example.com', oneTime)).res.status, 403, 'the one-time password is gone');

  const [stored] = await svc.sql<{ password_hash: string }[]>`select password_hash from portal_accounts where email = 'Owner@Example.com'`;
  t.match(stored?.password_hash, /^scrypt\$131072\$8\$1\$/, "a chosen password is kept as a scrypt hash at OWASP's cost (N = 2^17, r = 8, p = 1)");
  const sessions = await svc.sql<{ token_hash: Buffer }[]>`select token_hash from portal_sessions`;
  const cookieValue = browser.cookie.split('=')[1]!;
  t.notOk(sessions.some((s) => s.token_hash.toString('base64url') === cookieValue || s.token_hash.toString() === cookieValue), 'the cookie value is not stored');
});

t.test('a session carries its role\'s permissions, for its own project only', async (t) => {
  const supervisor = await accountWithPassword('sup@example.com', 'supervisor');
  const accounting = await accountWithPassword('acc@example.com', 'accounting');
  const backoffice = await accountWithPassword('back@example.com', 'backoffice');
  await svc.request('POST', `${p}/shops`, { token: await svc.token(['shopsWrite']), body: { id: 's1', name: 'Markt' } });

  t.equal((await supervisor.request('GET', `${p}/checkout/process?shop=s1`)).status, 200, 'supervisor lists processes');
  t.equal((await supervisor.request('GET', `${p}/orders`)).status, 403, 'supervisor reads no orders');
  t.equal((await supervisor.request('GET', `${p}/products`)).status, 403, 'supervisor reads no catalog (nor aborts: that is the customer\'s)');
  t.equal((await accounting.request('GET', `${p}/closings`)).status, 200, 'accounting reads closings');
  t.equal((await accounting.request('GET', `${p}/orders`)).status, 200, 'accounting reads orders');
  t.equal((await accounting.request('GET', `${p}/coupons`)).status, 403, 'accounting reads no coupons');
  t.equal((await backoffice.request('GET', `${p}/coupons`)).status, 200, 'backoffice reads coupons');
  const settingsWrite = await backoffice.request('PUT', `${p}/settings`, { body: { currency: 'EUR' } });
  t.equal(settingsWrite.status, 403, 'only an owner writes settings');
  t.equal((await backoffice.request('GET', `${p}/portal/accounts`)).status, 403, 'only an owner manages accounts');
  const other = await backoffice.request('GET', '/acme-other01/shops');
  t.equal(other.status, 403, 'another project refuses the session');
  t.match(other.body, { type: 'forbidden', message: /not valid for project acme-other01/ });
});

t.test('a write with the session needs the edge\'s own Origin; a bearer token needs none', async (t) => {
  const backoffice = await accountWithPassword('writer@example.com', 'backoffice');
  const shop = { id: 's2', name: 'Filiale' };
  const missing = await backoffice.request('POST', `${p}/shops`, { body: shop, origin: null });
  t.equal(missing.status, 403);
  t.match(missing.body.message, /Origin/);
  t.equal((await backoffice.request('POST', `${p}/shops`, { body: shop, origin: 'https://evil.example' })).status, 403);
  t.equal((await svc.request('GET', `${p}/shops/s2`, { token: await svc.token(['shopsRead']) })).status, 404, 'nothing was written');
  const own = await backoffice.request('POST', `${p}/shops`, { body: shop });
  t.ok(own.status < 300, own.text);
  t.equal((await backoffice.request('GET', `${p}/shops/s2`)).status, 200, 'reads need no Origin');
  const signInElsewhere = await svc.request('POST', '/portal/api/session', { body: { project: TestProject, email: 'writer@example.com', password: 'a-good-password-1' }, headers: { origin: 'https://evil.example' } });
  t.equal(signInElsewhere.status, 403, 'a sign-in form of another site is refused');
});

t.test('five failed sign-ins lock an account for 15 minutes; an owner\'s reset unlocks it', async (t) => {
  await accountWithPassword('lock@example.com', 'supervisor', 'the-right-password');
  for (let i = 1; i <= 4; i++) {
    const res = (await signIn('lock@example.com', `wrong-${i}`)).res;
    t.equal(res.status, 403);
    t.equal(res.body.type, 'forbidden', `failure ${i} is a plain refusal`);
  }
  const fifth = (await signIn('lock@example.com', 'wrong-5')).res;
  t.equal(fifth.status, 403);
  t.equal(fifth.body.type, 'account_locked');
  const right = (await signIn('lock@example.com', 'the-right-password')).res;
  t.equal(right.status, 403, 'the right password is refused while locked');
  t.equal(right.body.type, 'account_locked');
  t.notOk(right.headers.get('set-cookie'), 'no session');
  const [row] = await svc.sql<{ minutes: number }[]>`select round(extract(epoch from locked_until - now()) / 60)::int as minutes from portal_accounts where email = 'lock@example.com'`;
  t.equal(row?.minutes, 15);
  t.equal((await signIn('nobody@example.com', 'x')).res.body.type, 'forbidden', 'an unknown email reads like a wrong password');

  const list = await svc.request('GET', `${p}/portal/accounts`, { token: admin });
  const locked = list.body.accounts.find((a: any) => a.email === 'lock@example.com');
  t.match(locked, { role: 'supervisor', lockedUntil: /Z$/ });
  const reset = await svc.request('PATCH', `${p}/portal/accounts/${locked.id}`, { token: admin, body: { resetPassword: true } });
  t.equal(reset.status, 200, reset.text);
  t.match(reset.body.account, { lockedUntil: null, passwordChangeRequired: true });
  t.equal((await signIn('lock@example.com', reset.body.password)).res.status, 200, 'the new one-time password signs in');
});

t.test('sessions end by sign-out, by expiry and with their account', async (t) => {
  const a = await accountWithPassword('end@example.com', 'backoffice');
  t.equal((await a.request('GET', `${p}/coupons`)).status, 200);
  const out = await a.request('DELETE', '/portal/api/session');
  t.equal(out.status, 204);
  t.match(out.headers.get('set-cookie'), /^portal_session=; .*Max-Age=0/, 'the cookie is cleared');
  t.equal((await a.request('GET', `${p}/coupons`)).status, 403, 'the old cookie value is worth nothing');
  t.equal((await a.request('GET', '/portal/api/session')).status, 403);

  const { browser: b } = await signIn('end@example.com', 'a-good-password-1');
  t.equal((await b.request('GET', '/portal/api/session')).status, 200);
  await svc.sql`update portal_sessions set expires_at = now() - interval '1 second' where account_id = (select id from portal_accounts where email = 'end@example.com')`;
  t.equal((await b.request('GET', `${p}/coupons`)).status, 403, 'an expired session is refused');

  const { browser: c } = await signIn('end@example.com', 'a-good-password-1');
  const id = (await c.request('GET', '/portal/api/session')).body.account.id;
  t.equal((await svc.request('DELETE', `${p}/portal/accounts/${id}`, { token: admin })).status, 200);
  t.equal((await c.request('GET', `${p}/coupons`)).status, 403, 'a deleted account\'s session ends at once');
});

t.test('a project keeps an owner; an email has one account per project', async (t) => {
  const list = await svc.request('GET', `${p}/portal/accounts`, { token: admin });
  const owner = list.body.accounts.find((a: any) => a.role === 'owner');
  const demote = await svc.request('PATCH', `${p}/portal/accounts/${owner.id}`, { token: admin, body: { role: 'backoffice' } });
  t.equal(demote.status, 409);
  t.equal((await svc.request('DELETE', `${p}/portal/accounts/${owner.id}`, { token: admin })).status, 409);
  const twice = await svc.request('POST', `${p}/portal/accounts`, { token: admin, body: { email: 'OWNER@example.com', role: 'supervisor' } });
  t.equal(twice.status, 409);
  const bad = await svc.request('POST', `${p}/portal/accounts`, { token: admin, body: { email: 'not-an-email', role: 'king' } });
  t.equal(bad.status, 400);
  t.equal((await svc.request('GET', `${p}/portal/accounts`, { token: await svc.token(['shopsRead']) })).status, 403);
});

t.test('a hash made at an older cost still signs in, and is made anew at the current cost by that sign-in', async (t) => {
  await accountWithPassword('older@example.com', 'backoffice', 'an-older-password');
  const older = await hashPassword('an-older-password', { N: 16_384, r: 8, p: 1 });
  await svc.sql`update portal_accounts set password_hash = ${older} where email = 'older@example.com'`;
  const { res } = await signIn('older@example.com', 'an-older-password');
  t.equal(res.status, 200, 'the older hash verifies');
  const [row] = await svc.sql<{ password_hash: string }[]>`select password_hash from portal_accounts where email = 'older@example.com'`;
  t.match(row?.password_hash, /^scrypt\$131072\$8\$1\$/, 'and is replaced by one at N = 2^17');
  t.equal((await signIn('older@example.com', 'an-older-password')).res.status, 200, 'which signs in');
  t.equal((await signIn('older@example.com', 'not-the-password')).res.status, 403, 'and refuses another password');
});

t.test('a one-time password hashed at the older cost still signs in, and a wrong one is refused', async (t) => {
  const created = await svc.request('POST', `${p}/portal/accounts`, { token: admin, body: { email: 'waiting@example.com', role: 'backoffice' } });
  t.equal(created.status, 201, created.text);
  const older = await hashPassword(created.body.password, { N: 16_384, r: 8, p: 1 });
  await svc.sql`update portal_accounts set password_hash = ${older} where email = 'waiting@example.com'`;
  t.equal((await signIn('waiting@example.com', 'not-the-password')).res.status, 403, 'a wrong password is refused (verified beside a dummy at N = 2^17)');
  const { res } = await signIn('waiting@example.com', created.body.password);
  t.equal(res.status, 200, 'the one-time password signs in');
  t.equal(res.body.account.passwordChangeRequired, true, 'and only lets its holder choose one');
});

t.test('a malformed session cookie is a 403, not a 500', async (t) => {
  for (const cookie of ['portal_session=%E0%A4%A', 'other=1; portal_session=%']) {
    const session = await svc.request('GET', '/portal/api/session', { headers: { cookie } });
    t.equal(session.status, 403, `GET /portal/api/session with ${cookie}`);
    t.match(session.body, { type: 'forbidden', message: /malformed/ });
    t.equal((await svc.request('GET', `${p}/shops`, { headers: { cookie } })).status, 403, `an API route with ${cookie}`);
    const change = await svc.request('PUT', '/portal/api/session/password', { headers: { cookie, origin }, body: { currentPassword: 'x', newPassword: 'a-good-password-2' } });
    t.equal(change.status, 403, `a password change with ${cookie}`);
  }
  t.equal((await svc.request('GET', `${p}/shops`, { headers: { cookie: 'other=%E0%A4%A' }, token: await svc.token(['shopsRead']) })).status, 200, "another cookie's value is not read");
});

t.test('wrong current passwords of a password change count as failed sign-ins: five lock the account', async (t) => {
  const browser = await accountWithPassword('change@example.com', 'backoffice', 'the-current-one');
  const change = (currentPassword: string) => browser.request('PUT', '/portal/api/session/password', { body: { currentPassword, newPassword: 'a-new-password-1' } });
  for (let i = 1; i <= 4; i++) t.match(await change(`wrong-${i}`), { status: 403, body: { type: 'forbidden' } }, `wrong current password ${i}`);
  t.match(await change('wrong-5'), { status: 403, body: { type: 'account_locked' } }, 'the fifth locks the account');
  t.match(await change('the-current-one'), { status: 403, body: { type: 'account_locked' } }, 'the right one is refused while locked');
  t.equal((await signIn('change@example.com', 'the-current-one')).res.body.type, 'account_locked', 'so is a sign-in');
  const [row] = await svc.sql<{ password_hash: string }[]>`select password_hash from portal_accounts where email = 'change@example.com'`;
  t.match(row?.password_hash, /^scrypt\$/, 'the password is unchanged');
});

t.test('the session cookie is Secure whenever PUBLIC_BASE_URL is https, also when a TLS proxy speaks plain http to the edge', async (t) => {
  await accountWithPassword('proxied@example.com', 'backoffice', 'a-proxied-password');
  const edge = await startMoreEdge(t, svc, { ...PasswordHashingEnv, PUBLIC_BASE_URL: 'https://checkout.example.com' });
  const res = await edge.request('POST', '/portal/api/session', { body: { project: TestProject, email: 'proxied@example.com', password: 'a-proxied-password' } });
  t.equal(res.status, 200, res.text);
  t.match(res.headers.get('set-cookie'), /^portal_session=[A-Za-z0-9_-]+; .*; Secure$/, 'Secure over plain http');
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0]!;
  const out = await edge.request('DELETE', '/portal/api/session', { headers: { cookie, origin: 'https://checkout.example.com' } });
  t.equal(out.status, 204);
  t.match(out.headers.get('set-cookie'), /Max-Age=0; Secure$/, 'and so is the cookie that clears it');
});
