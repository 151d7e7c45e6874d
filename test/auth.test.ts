import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, type JWK } from 'jose';
import t from 'tap';
import { startTestService, TestProject, TestSecret } from './support/service.js';

/** A JWKS endpoint like an identity provider's, serving one RSA and one EC public key. */
const rsa = await generateKeyPair('RS256');
const ec = await generateKeyPair('ES256');
const jwks = {
  keys: [
    { ...(await exportJWK(rsa.publicKey)), kid: 'rsa-1', alg: 'RS256', use: 'sig' },
    { ...(await exportJWK(ec.publicKey)), kid: 'ec-1', alg: 'ES256', use: 'sig' },
  ] as JWK[],
};
const jwksServer = createServer((_req, res) => {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(jwks));
});
await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve));
const jwksUrl = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/jwks.json`;

// Registered first, so it runs after the service's teardown below.
t.teardown(() => new Promise<void>((resolve) => {
  jwksServer.closeAllConnections();
  jwksServer.close(() => resolve());
}));

const svc = await startTestService(t, { env: { JWKS_URL: jwksUrl } });
const secret = new TextEncoder().encode(TestSecret);
const shops = `/${TestProject}/shops`;

interface Claims {
  project?: string;
  permissions?: string[];
  [claim: string]: unknown;
}
const goodClaims: Claims = { project: TestProject, permissions: ['shopsRead', 'shopsWrite'] };

function jwt(claims: Claims = goodClaims, options: { iss?: string; aud?: string; exp?: number | string | null } = {}) {
  const token = new SignJWT(claims)
    .setIssuer(options.iss ?? 'checkout-platform')
    .setAudience(options.aud ?? 'checkout-platform')
    .setIssuedAt();
  if (options.exp !== null) token.setExpirationTime(options.exp ?? '1h');
  return token;
}

function base64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

async function storedShops(): Promise<number> {
  const [row] = await svc.sql<{ n: number }[]>`select count(*)::int as n from shops`;
  return row?.n ?? 0;
}

// One shop exists, so a refused read has something it could have leaked.
const seeded = await svc.request('POST', shops, { token: await jwt().setProtectedHeader({ alg: 'HS256' }).sign(secret), body: { id: 'seeded', name: 'Seeded' } });
t.equal(seeded.status, 201, 'seeded a shop with a good token');

const now = Math.floor(Date.now() / 1000);
const refused: Array<[string, () => Promise<string | undefined>]> = [
  ['no token at all', async () => undefined],
  ['a token that is not a JWT', async () => 'garbage'],
  ['a token of three garbage parts', async () => 'abc.def.ghi'],
  ['an unsigned token with alg none', async () => `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url({ ...goodClaims, iss: 'checkout-platform', aud: 'checkout-platform', exp: now + 3600 })}.`],
  ['an expired token', async () => jwt(goodClaims, { exp: now - 60 }).setProtectedHeader({ alg: 'HS256' }).sign(secret)],
  ['a token without exp', async () => jwt(goodClaims, { exp: null }).setProtectedHeader({ alg: 'HS256' }).sign(secret)],
  ['a token of another issuer', async () => jwt(goodClaims, { iss: 'someone-else' }).setProtectedHeader({ alg: 'HS256' }).sign(secret)],
  ['a token for another audience', async () => jwt(goodClaims, { aud: 'another-service' }).setProtectedHeader({ alg: 'HS256' }).sign(secret)],
  ['a token signed with another secret', async () => jwt().setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode('x'.repeat(64)))],
  ['an HS256 token whose HMAC key is the RSA public key (algorithm confusion)', async () => jwt().setProtectedHeader({ alg: 'HS256', kid: 'rsa-1' }).sign(new TextEncoder().encode(await exportSPKI(rsa.publicKey)))],
  ['an HS512 token signed with the right secret (algorithm not pinned)', async () => jwt().setProtectedHeader({ alg: 'HS512' }).sign(secret)],
  ['an RS256 token signed by a key the JWKS does not hold', async () => jwt().setProtectedHeader({ alg: 'RS256', kid: 'rsa-1' }).sign((await generateKeyPair('RS256')).privateKey)],
  ['a token for another project', async () => jwt({ ...goodClaims, project: 'other-project' }).setProtectedHeader({ alg: 'HS256' }).sign(secret)],
  ['a token without the project claim', async () => jwt({ permissions: goodClaims.permissions }).setProtectedHeader({ alg: 'HS256' }).sign(secret)],
  ['a token without the permissions claim', async () => jwt({ project: TestProject }).setProtectedHeader({ alg: 'HS256' }).sign(secret)],
  ['a token that lacks the permission', async () => jwt({ project: TestProject, permissions: ['productsRead'] }).setProtectedHeader({ alg: 'HS256' }).sign(secret)],
  ['a token whose permissions claim is a wildcard string', async () => jwt({ project: TestProject, permissions: '*' } as unknown as Claims).setProtectedHeader({ alg: 'HS256' }).sign(secret)],
];

for (const [name, makeToken] of refused) {
  t.test(`refuses ${name} with 403 and reads or changes nothing`, async (t) => {
    const token = await makeToken();
    const before = await storedShops();

    const read = await svc.request('GET', `${shops}/seeded`, { token });
    t.equal(read.status, 403);
    t.equal(read.body.type, 'forbidden');
    t.notMatch(read.text, /Seeded/, 'no shop data in the answer');

    const write = await svc.request('POST', shops, { token, body: { name: 'Intruder' } });
    t.equal(write.status, 403);
    t.equal(write.body.type, 'forbidden');

    const remove = await svc.request('DELETE', `${shops}/seeded`, { token });
    t.equal(remove.status, 403);
    t.equal(await storedShops(), before, 'nothing stored or deleted');
  });
}

t.test('refuses a non-Bearer authorization scheme', async (t) => {
  const token = await jwt().setProtectedHeader({ alg: 'HS256' }).sign(secret);
  const res = await svc.request('GET', `${shops}/seeded`, { headers: { authorization: `Basic ${token}` } });
  t.equal(res.status, 403);
});

t.test('refuses a token whose permission is given for another project even with all permissions', async (t) => {
  const token = await svc.token(['shopsRead', 'shopsWrite', 'projectsWrite'], { project: 'acme-other' });
  const res = await svc.request('GET', `${shops}/seeded`, { token });
  t.equal(res.status, 403);
  t.match(res.body.message, /not valid for project/);
});

t.test('accepts a good HS256 token', async (t) => {
  const res = await svc.request('GET', `${shops}/seeded`, { token: await jwt().setProtectedHeader({ alg: 'HS256' }).sign(secret) });
  t.equal(res.status, 200);
  t.equal(res.body.name, 'Seeded');
});

t.test('accepts RS256 and ES256 tokens signed by keys of the JWKS', async (t) => {
  const viaRsa = await jwt().setProtectedHeader({ alg: 'RS256', kid: 'rsa-1' }).sign(rsa.privateKey);
  t.equal((await svc.request('GET', `${shops}/seeded`, { token: viaRsa })).status, 200);
  const viaEc = await jwt().setProtectedHeader({ alg: 'ES256', kid: 'ec-1' }).sign(ec.privateKey);
  t.equal((await svc.request('GET', `${shops}/seeded`, { token: viaEc })).status, 200);
});

t.test('accepts a token again from its cache, and still refuses it for another project', async (t) => {
  const token = await svc.token(['shopsRead']);
  t.equal((await svc.request('GET', `${shops}/seeded`, { token })).status, 200);
  t.equal((await svc.request('GET', `${shops}/seeded`, { token })).status, 200);
  t.equal((await svc.request('GET', '/acme-other/shops/seeded', { token })).status, 403);
});

t.test('a service configured with JWKS only refuses every HS256 token', async (t) => {
  const jwksOnly = await startTestService(t, { env: { JWT_SECRET: '', JWKS_URL: jwksUrl } });
  const hs = await jwt().setProtectedHeader({ alg: 'HS256' }).sign(secret);
  t.equal((await jwksOnly.request('GET', `${shops}/seeded`, { token: hs })).status, 403);
  const rs = await jwt().setProtectedHeader({ alg: 'RS256', kid: 'rsa-1' }).sign(rsa.privateKey);
  t.equal((await jwksOnly.request('GET', `${shops}`, { token: rs })).status, 200);
});
