import { randomUUID } from 'node:crypto';
import { logLoopFailure, type Sql } from '../../src/infra/postgres.js';
import type { Logger } from '../../src/logger.js';
import { route, type Route } from '../../src/messaging/worker.js';
import { isSealed, type KeyRing } from '../../src/secrets/key-ring.js';
import { idempotency, type ClaimReply } from '../../subjects/idempotency.js';
import * as db from './sql.js';

/**
 * Idempotency keys (subjects/idempotency.ts): the edge claims a key before it runs a create and
 * records the answer after it. Postgres decides who runs: the claim is one `insert ... on conflict`,
 * so of two requests with the same key exactly one gets it. Every worker process also deletes the
 * keys whose 24 hours are over, a batch at a time.
 *
 * An answer is sealed twice: by the edge with a key derived from the client's Idempotency-Key, and
 * here with SECRETS_KEY (src/secrets/key-ring.ts, its key id in the text), bound to its project and
 * key: some carry what is shown once (a PoS credential's password), and a database reader must
 * neither read one nor forge one (a guessable client key would do for the first seal alone). An
 * answer without the server's seal (kept by a release before it, or written by hand) is treated as
 * absent: it cannot be told from a forgery, so the key is claimed anew and the request runs again.
 * Only a retry that crosses the upgrade within the 24 hours meets one; a create whose id comes from
 * the key (idFromIdempotencyKey) then finds what its first try made. One sealed under a key the ring
 * no longer has cannot be replayed (keep SECRETS_KEY_PREVIOUS for a day after a new key).
 */
export interface IdempotencyActor {
  routes: Route[];
  /** Stops the clean-up (waits for a round that is running). */
  stop(): Promise<void>;
}

const PurgeBatch = 1000;

export function createIdempotencyActor(deps: { sql: Sql; log: Logger; secrets: KeyRing; purgeEveryMs?: number }): IdempotencyActor {
  const { sql, log, secrets, purgeEveryMs = 10 * 60_000 } = deps;

  const routes = [
    route(idempotency.claim, async (request): Promise<ClaimReply> => {
      // A key released or expired between the two statements is claimed on the next round.
      const claim = request.claim ?? randomUUID();
      for (let round = 0; round < 3; round++) {
        if (await db.claimKey(sql, { ...request, claim })) return { outcome: 'claimed', claim };
        const row = await db.findKey(sql, request.project, request.keyHash);
        if (!row) continue;
        if (row.fingerprint !== request.fingerprint) return { outcome: 'reused' };
        // This claim sent again (its first answer was lost with a NATS node): it holds the key.
        if (row.claim === claim && row.status === null) return { outcome: 'claimed', claim };
        if (row.status === null || !row.answer) return { outcome: 'inProgress' };
        const kept = row.answer.toString('utf8');
        if (!isSealed(kept)) {
          await db.forgetUnsealedAnswer(sql, request.project, request.keyHash, row.claim);
          continue;
        }
        return { outcome: 'replay', status: row.status, answer: secrets.open(kept, answerPurpose(request.project, request.keyHash)) };
      }
      return { outcome: 'inProgress' };
    }),
    route(idempotency.complete, async ({ answer, ...key }) => {
      await db.completeKey(sql, { ...key, answer: Buffer.from(secrets.seal(answer, answerPurpose(key.project, key.keyHash))) });
      return null;
    }),
    route(idempotency.release, async (key) => {
      await db.releaseKey(sql, key);
      return null;
    }),
  ];

  let round: Promise<void> | undefined;
  const purge = async () => {
    try {
      while ((await db.deleteExpiredKeys(sql, PurgeBatch)) === PurgeBatch);
    } catch (err) {
      logLoopFailure(log, err, 'deleting expired idempotency keys failed; trying again later');
    }
  };
  const timer = setInterval(() => {
    round ??= purge().finally(() => (round = undefined));
  }, purgeEveryMs).unref();

  return {
    routes,
    async stop() {
      clearInterval(timer);
      await round;
    },
  };
}

/** What a kept answer is bound to: its key (the sealed text is the answer's base64, as the edge sends it). */
function answerPurpose(project: string, keyHash: string): string {
  return `idempotency.answer:${project}:${keyHash}`;
}
