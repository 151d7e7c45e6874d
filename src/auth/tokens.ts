import { createHmac, createSecretKey, randomUUID } from 'node:crypto';
import { createRemoteJWKSet, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { z } from 'zod';
import { AppError } from '../errors.js';
import type { Permission } from './permissions.js';

/**
 * Bearer tokens: HS256 with JWT_SECRET, or asymmetric keys from JWKS_URL. Algorithms are pinned and
 * each algorithm family has its own key source, so a public key can never be used as an HMAC secret.
 */
const SymmetricAlgorithms = ['HS256'] as const;
const AsymmetricAlgorithms = ['RS256', 'PS256', 'ES256', 'EdDSA'] as const;

const Claims = z.object({
  sub: z.string().optional(),
  project: z.string().min(1),
  permissions: z.array(z.string()),
  appUserID: z.string().optional(),
  clientID: z.string().optional(),
  exp: z.number(),
});

export interface Principal {
  sub?: string;
  project: string;
  permissions: ReadonlySet<string>;
  appUserID?: string;
  clientID?: string;
  /** Set when a PoS credential (Basic) authenticated the request: its name. */
  posName?: string;
}

export interface TokenVerifier {
  /** Resolves to the token's principal; rejects with a 403 AppError for any token it does not accept. */
  verify(token: string): Promise<Principal>;
}

export interface VerifierOptions {
  secret?: string;
  jwksUrl?: string;
  issuer: string;
  audience: string;
  /** Verified tokens are remembered until they expire; clients send the same token many times. */
  cacheSize?: number;
}

export function createTokenVerifier(options: VerifierOptions): TokenVerifier {
  const secret = options.secret ? new TextEncoder().encode(options.secret) : undefined;
  const jwks = options.jwksUrl ? createRemoteJWKSet(new URL(options.jwksUrl)) : undefined;
  const algorithms = [...(secret ? SymmetricAlgorithms : []), ...(jwks ? AsymmetricAlgorithms : [])];
  const symmetric: ReadonlySet<string> = new Set(SymmetricAlgorithms);

  const getKey: JWTVerifyGetKey = (header, token) => {
    if (symmetric.has(header.alg)) {
      if (!secret) throw AppError.forbidden('token algorithm not accepted');
      return secret;
    }
    if (!jwks) throw AppError.forbidden('token algorithm not accepted');
    return jwks(header, token);
  };

  const cache = new Map<string, { principal: Principal; expiresAt: number }>();
  const cacheSize = options.cacheSize ?? 10_000;

  return {
    async verify(token) {
      const cached = cache.get(token);
      if (cached) {
        if (cached.expiresAt > Date.now()) return cached.principal;
        cache.delete(token);
      }
      let payload: unknown;
      try {
        ({ payload } = await jwtVerify(token, getKey, {
          algorithms,
          issuer: options.issuer,
          audience: options.audience,
          requiredClaims: ['exp'],
        }));
      } catch (err) {
        throw new AppError(403, 'forbidden', 'invalid or expired token', undefined, { cause: err });
      }
      const claims = Claims.safeParse(payload);
      if (!claims.success) throw AppError.forbidden('token lacks the project or permissions claim');
      const { exp, permissions, ...rest } = claims.data;
      const principal: Principal = { ...rest, permissions: new Set(permissions) };
      if (cache.size >= cacheSize) cache.delete(cache.keys().next().value as string);
      cache.set(token, { principal, expiresAt: exp * 1000 });
      return principal;
    },
  };
}

export interface TokenRequest {
  project: string;
  permissions: readonly Permission[];
  sub?: string;
  appUserID?: string;
  clientID?: string;
  /** Lifetime such as `30m`, `1h` or `7d` (s, m, h, d or w). Default `1h`. */
  ttl?: string;
}

const TtlUnits: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 };

/** Seconds of a lifetime such as `30m`; a negative one (`-1h`) makes a token that has expired. */
export function ttlSeconds(ttl: string): number {
  const match = /^(-?\d+)([smhdw])$/.exec(ttl);
  if (!match) throw new Error(`a lifetime is a number with s, m, h, d or w, such as 1h (got ${ttl})`);
  return Number(match[1]) * TtlUnits[match[2]!]!;
}

/** Signs an HS256 token with the platform's secret: for the token CLI, the docs' examples and tests. */
export async function signToken(request: TokenRequest, options: { secret: string; issuer: string; audience: string }): Promise<string> {
  const { project, permissions, ttl = '1h', ...optional } = request;
  const signer = createTokenSigner(options);
  return signer.sign({ project, permissions, ...optional }, ttlSeconds(ttl)).token;
}

/** What a token says beyond what the signer adds (iss, aud, iat, exp, jti). */
export interface TokenClaims {
  project: string;
  permissions: readonly string[];
  sub?: string;
  appUserID?: string;
  clientID?: string;
}

export interface SignedToken {
  token: string;
  /** The token's `jti`. */
  id: string;
  /** Unix seconds. */
  issuedAt: number;
  expiresAt: number;
}

/** The answer of a token endpoint where no signer is configured (JWKS_URL alone): tokens come from the identity provider. */
export function noTokensIssued(): AppError {
  return new AppError(501, 'not_implemented', 'this deployment issues no tokens (JWT_SECRET is not set: tokens come from its identity provider)');
}

export interface TokenSigner {
  /** A token that lives `lifetimeSeconds` from now, with a `jti` of its own. */
  sign(claims: TokenClaims, lifetimeSeconds: number): SignedToken;
}

/**
 * Signs HS256 tokens (RFC 7515's compact form) with node:crypto and the key kept as a KeyObject:
 * 6 to 8 µs of CPU a token, where jose's SignJWT took 113 to 200 µs (it signs through WebCrypto,
 * asynchronously; measured side by side on the 2-core machine, 2026-11-28);
 * a token request signs one. test/tokens.test.ts checks that jose verifies every token signed here
 * and that jose signs the same claims to the same bytes. Verifying stays jose's (createTokenVerifier).
 */
export function createTokenSigner(options: { secret: string; issuer: string; audience: string }): TokenSigner {
  const key = createSecretKey(Buffer.from(options.secret));
  const header = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');
  return {
    sign(claims, lifetimeSeconds) {
      const issuedAt = Math.floor(Date.now() / 1000);
      const expiresAt = issuedAt + lifetimeSeconds;
      const id = randomUUID();
      const payload = Buffer.from(JSON.stringify({ ...claims, iss: options.issuer, aud: options.audience, iat: issuedAt, exp: expiresAt, jti: id })).toString('base64url');
      const signature = createHmac('sha256', key).update(`${header}.${payload}`).digest('base64url');
      return { token: `${header}.${payload}.${signature}`, id, issuedAt, expiresAt };
    },
  };
}
