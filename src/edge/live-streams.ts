import type { Principal } from '../auth/tokens.js';
import { AppError } from '../errors.js';

/**
 * The live event streams (server-sent events) this edge process holds, bounded per token (its sub
 * and project: a bearer token's sub, a portal session's `portal:<email>`) and per project: a stream
 * holds a NATS subscription and a socket for as long as its client keeps it, so one tenant must not
 * fill the edge with them. Past either cap the next stream is 429 with Retry-After; a stream that
 * ends frees its slot at once.
 */
export interface LiveStreamLimits {
  /** Streams one token may hold at once on this edge process. */
  perToken: number;
  /** Streams one project may hold at once on this edge process, all its tokens and sessions together. */
  perProject: number;
  /** Bytes a stream may have waiting for a client that does not read before it is dropped. */
  bufferBytes: number;
}

/** Seconds a refused client is told to wait: a slot frees when another stream of its token or project ends. */
export const LiveStreamRetryAfterSeconds = 10;

export interface LiveStreamSlots {
  /** Takes a slot for the principal's stream (its release, to call once it ends), or throws the 429. */
  take(principal: Principal): () => void;
}

export function liveStreamSlots(limits: Pick<LiveStreamLimits, 'perToken' | 'perProject'>): LiveStreamSlots {
  const held = new Map<string, number>();
  const count = (key: string, by: number) => {
    const n = (held.get(key) ?? 0) + by;
    if (n > 0) held.set(key, n);
    else held.delete(key);
  };
  return {
    take(principal) {
      const project = `project:${principal.project}`;
      const token = `token:${principal.sub ?? ''}@${principal.project}`;
      if ((held.get(token) ?? 0) >= limits.perToken) throw refused(`this token already follows ${limits.perToken} live streams`);
      if ((held.get(project) ?? 0) >= limits.perProject) throw refused(`this project already follows ${limits.perProject} live streams`);
      count(token, 1);
      count(project, 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        count(token, -1);
        count(project, -1);
      };
    },
  };
}

function refused(why: string): AppError {
  return new AppError(429, 'too_many_requests', `too many live streams: ${why}; close one or retry in ${LiveStreamRetryAfterSeconds} s`, [
    { retryAfterSeconds: LiveStreamRetryAfterSeconds },
  ]);
}
