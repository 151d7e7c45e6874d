import rateLimit, { type FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { AppError } from '../errors.js';
import type { FailureCounts } from './failure-counts.js';

/**
 * Throttling with @fastify/rate-limit, in two ways:
 *
 * - Failed sign-ins: two limiters made with `createRateLimit`, one keyed by the client address and
 *   one by the credential (`basic:<project>:<user>` for a PoS credential, `sub:<sub>` for a bearer
 *   token), both counting in the failure counts (failure-counts.ts, shared by the edges over NATS).
 *   An attempt only reads the counts (`increment: false`, from memory); a failure increments them.
 *   Once either key has `limit` failures in its window, every attempt of that key is 429 until the
 *   window ends, whether its credential is right or not: otherwise a guesser would still learn which
 *   guess is right.
 * - Requests per token (sub and project), when TOKEN_RATE_LIMIT is set: the plugin's own limiter
 *   after authentication, counting in this process's memory, with its X-RateLimit-* headers.
 */
export interface AuthThrottle {
  /** No failed sign-in is counted anywhere: nothing to check (the usual case, at no cost). */
  quiet(): boolean;
  /** Throws 429 (with Retry-After) when the client's address or the credential is blocked. */
  check(request: FastifyRequest, reply: FastifyReply, credential: string | undefined): Promise<void>;
  /** Counts a failed sign-in of the address and the credential. */
  failed(request: FastifyRequest, credential: string | undefined): Promise<void>;
  /**
   * A sign-in with a credential: 429 before `work` runs when the address or the credential is
   * blocked (no worker asked, no hash computed); a refusal of `work` (a 401 or 403 AppError) is
   * counted against both and thrown on.
   */
  signIn<T>(request: FastifyRequest, reply: FastifyReply, credential: string | undefined, work: () => Promise<T>): Promise<T>;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The credential key the failure limiter is asked about (set just before each call). */
    throttleCredential: string | undefined;
  }
}

function tooManyRequests(retryAfterSeconds: number): AppError {
  return new AppError(429, 'too_many_requests', `too many requests: retry in ${retryAfterSeconds} s`);
}

export async function registerThrottle(app: FastifyInstance, config: Config['throttle'], failures: FailureCounts, tokenCounts: FailureCounts): Promise<AuthThrottle> {
  // The plugin's root store: a limiter that names its own store (the failure limiters) gets it, any
  // other (the per-token limit) counts in memory.
  const RootStore = class {
    constructor() {
      return { ...tokenCounts, child: (params: { store?: FastifyRateLimitStoreCtor }) => (params.store ? new params.store({}) : tokenCounts) };
    }
  } as unknown as FastifyRateLimitStoreCtor;
  const FailureStore = class {
    constructor() {
      return failures;
    }
  } as unknown as FastifyRateLimitStoreCtor;

  await app.register(rateLimit, {
    global: false,
    store: RootStore,
    errorResponseBuilder: (_request, context) => tooManyRequests(Math.ceil(context.ttl / 1000)),
  });
  app.decorateRequest('throttleCredential', undefined);

  const { limit, windowMs } = config.authFailures;
  // A store that cannot be reached must not lock everyone out: the failure is then not counted.
  const limiter = (keyGenerator: (request: FastifyRequest) => string) =>
    app.createRateLimit({ store: FailureStore, max: limit, timeWindow: windowMs, skipOnError: true, keyGenerator, allowList: (_request, key) => key === '' });
  const byAddress = limiter((request) => `ip:${request.ip}`);
  const byCredential = limiter((request) => request.throttleCredential ?? '');

  const blockedFor = async (check: typeof byAddress, request: FastifyRequest): Promise<number | undefined> => {
    const state = await check(request, { increment: false });
    return !state.isAllowed && state.remaining === 0 && state.ttl > 0 ? state.ttlInSeconds : undefined;
  };

  const throttle: AuthThrottle = {
    quiet: () => failures.none(),
    async check(request, reply, credential) {
      request.throttleCredential = credential;
      const wait = (await blockedFor(byAddress, request)) ?? (await blockedFor(byCredential, request));
      if (wait === undefined) return;
      reply.header('retry-after', wait);
      throw tooManyRequests(wait);
    },
    async failed(request, credential) {
      request.throttleCredential = credential;
      const counted = await Promise.all([byAddress(request), byCredential(request)]);
      // Operators see a block once, when the failure that reaches the limit is counted.
      for (const state of counted) {
        if (!state.isAllowed && state.remaining === 0 && state.max > 0) request.log.warn({ key: state.key.slice(0, 200), windowS: state.ttlInSeconds }, 'sign-ins blocked after too many failures');
      }
    },
    async signIn(request, reply, credential, work) {
      if (!throttle.quiet()) await throttle.check(request, reply, credential);
      try {
        return await work();
      } catch (err) {
        if (err instanceof AppError && (err.status === 401 || err.status === 403)) await throttle.failed(request, credential);
        throw err;
      }
    },
  };
  return throttle;
}


/**
 * The per-token limit (TOKEN_RATE_LIMIT), registered after the auth hook: it counts the principal
 * that hook found.
 */
export function registerTokenLimit(app: FastifyInstance, config: Config['throttle']): void {
  if (!config.tokenRate.limit) return;
  app.addHook(
    'onRequest',
    app.rateLimit({
      max: config.tokenRate.limit,
      timeWindow: config.tokenRate.windowMs,
      // Public routes and refused requests have no token to count.
      allowList: (request) => !request.principal,
      keyGenerator: (request) => `${request.principal?.sub ?? ''}@${request.principal?.project ?? ''}`,
    }),
  );
}
