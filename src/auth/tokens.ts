import { createRemoteJWKSet, jwtVerify, SignJWT, type JWTVerifyGetKey } from 'jose';
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
  /** Lifetime such as `30m`, `1h` or `7d`. Default `1h`. */
  ttl?: string;
}

/** Signs an HS256 token with the platform's secret: for the token CLI, the docs' examples and tests. */
export async function signToken(request: TokenRequest, options: { secret: string; issuer: string; audience: string }): Promise<string> {
  const { project, permissions, ttl = '1h', ...optional } = request;
  return new SignJWT({ project, permissions: [...permissions], ...optional })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(options.issuer)
    .setAudience(options.audience)
    .setIssuedAt()
    .setExpirationTime(ttl)
    .sign(new TextEncoder().encode(options.secret));
}
