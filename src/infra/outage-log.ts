import type { Logger } from '../logger.js';

/** What an outage log says when an outage begins, while it lasts, and when it is over. */
export interface OutageMessages {
  begins: string;
  lasts: string;
  over: string;
}

export interface OutageLog {
  /** A try failed; `fields` say why (they go with the warning and the errors). */
  failed(fields: Record<string, unknown>): void;
  /** A try succeeded: an outage under way is over. */
  over(): void;
}

/** How long an outage may last before it is an error: a NATS node's or a Postgres failover takes seconds. */
const LoudAfterMs = 30_000;

/**
 * Says an outage once rather than at every retry of a loop (a failover made some sixty error lines a
 * worker in `npm run chaos`): a warning when it begins, an error every 30 s while it lasts longer,
 * and how long it lasted when it is over.
 */
export function createOutageLog(log: Logger, messages: OutageMessages): OutageLog {
  let since: number | undefined;
  let loudAt = 0;
  return {
    failed(fields) {
      const now = performance.now();
      if (since === undefined) {
        since = loudAt = now;
        log.warn(fields, messages.begins);
      } else if (now - since >= LoudAfterMs && now - loudAt >= LoudAfterMs) {
        loudAt = now;
        log.error({ ...fields, seconds: Math.round((now - since) / 1000) }, messages.lasts);
      }
    },
    over() {
      if (since === undefined) return;
      log.info({ seconds: Number(((performance.now() - since) / 1000).toFixed(1)) }, messages.over);
      since = undefined;
    },
  };
}
