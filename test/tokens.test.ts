import fc from 'fast-check';
import { decodeJwt, jwtVerify, SignJWT } from 'jose';
import t from 'tap';
import { createTokenSigner, createTokenVerifier, signToken, ttlSeconds } from '../src/auth/tokens.js';

/**
 * The platform signs its HS256 tokens with node:crypto (createTokenSigner) instead of jose's
 * SignJWT, which took ten times the CPU: jose must verify every token signed here, and jose signs
 * the same claims to the same bytes.
 */
const options = { secret: 'a-secret-that-is-long-enough-for-hs256-0123456789', issuer: 'checkout-platform', audience: 'checkout-platform' };
const key = new TextEncoder().encode(options.secret);

const Claims = fc.record(
  {
    project: fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_-]{0,20}$/),
    permissions: fc.array(fc.constantFrom('shopsRead', 'productsRead', 'ordersRead', 'couponsRead'), { maxLength: 4 }),
    sub: fc.string({ maxLength: 40 }),
    appUserID: fc.uuid(),
    clientID: fc.string({ maxLength: 40 }),
  },
  { requiredKeys: ['project', 'permissions'] },
);

t.test('jose verifies every token the signer makes, with its claims, jti, iat and exp', async (t) => {
  const signer = createTokenSigner(options);
  await fc.assert(
    fc.asyncProperty(Claims, fc.integer({ min: 60, max: 86_400 }), async (claims, lifetime) => {
      const signed = signer.sign(claims, lifetime);
      const { payload, protectedHeader } = await jwtVerify(signed.token, key, { issuer: options.issuer, audience: options.audience, algorithms: ['HS256'] });
      return (
        protectedHeader.alg === 'HS256' &&
        JSON.stringify({ ...payload, iss: undefined, aud: undefined, iat: undefined, exp: undefined, jti: undefined }) === JSON.stringify({ ...claims, iss: undefined, aud: undefined, iat: undefined, exp: undefined, jti: undefined }) &&
        payload.jti === signed.id &&
        payload.iat === signed.issuedAt &&
        payload.exp === signed.issuedAt + lifetime &&
        signed.expiresAt === payload.exp
      );
    }),
    { numRuns: 200 },
  );
  t.pass('verified');
});

t.test("jose's SignJWT signs the same claims to the same bytes", async (t) => {
  const signed = createTokenSigner(options).sign({ project: 'acme-1', permissions: ['shopsRead'], sub: 'client:svc-x', appUserID: 'u-1' }, 3600);
  const { iat, exp, jti } = decodeJwt(signed.token);
  const jose = await new SignJWT({ project: 'acme-1', permissions: ['shopsRead'], sub: 'client:svc-x', appUserID: 'u-1', iss: options.issuer, aud: options.audience, iat, exp, jti })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .sign(key);
  t.equal(signed.token, jose);
});

t.test('every token has a jti of its own, and the verifier takes it', async (t) => {
  const signer = createTokenSigner(options);
  const ids = new Set(Array.from({ length: 100 }, () => signer.sign({ project: 'p', permissions: [] }, 60).id));
  t.equal(ids.size, 100, 'no two alike');
  const principal = await createTokenVerifier(options).verify(await signToken({ project: 'p', permissions: ['shopsRead'], sub: 'me' }, options));
  t.same([principal.project, principal.sub, [...principal.permissions]], ['p', 'me', ['shopsRead']]);
  await t.rejects(createTokenVerifier(options).verify(await signToken({ project: 'p', permissions: [], ttl: '-1s' }, options)), { name: 'AppError', message: 'invalid or expired token' }, 'an expired one is refused');
});

t.test('lifetimes are a number with s, m, h, d or w', async (t) => {
  t.same(['30s', '15m', '2h', '7d', '1w', '-1h'].map(ttlSeconds), [30, 900, 7200, 604_800, 604_800, -3600]);
  for (const bad of ['1', 'h', '1y', '1.5h', ' 1h']) t.throws(() => ttlSeconds(bad), bad);
});
