import type { NatsConnection } from '@nats-io/transport-node';
import { ErrorHeaders } from '../../subjects/contract.js';
import { system } from '../../subjects/system.js';

/**
 * How the edge learns that a worker holding its requests died, within a fraction of a second
 * rather than at the request's timeout: the NATS server drops a dead connection's subscriptions
 * at once, and answers a request on a subject nobody subscribes to with "no responders".
 *
 * An edge lives in a NATS account of its own and reaches the workers through a service import,
 * which carries one answer per request and never "no responders" (subjects/system.ts). So it asks
 * one worker to take the census of the workers (every 5 s: one request, which costs the workers a
 * message each way per worker), and, while a request of this edge has waited longer than usual
 * (250 ms), asks one worker to probe every known worker's own subject (every 250 ms); one that
 * is gone is forgotten, and the requests under way may have been in its hands (`onLost`). No
 * message per request: a sale costs nothing more, and a slow request a probe round and 250 ms.
 */
export interface WorkerWatch {
  stop(): void;
}

export interface WorkerWatchDeps {
  nc: NatsConnection;
  /** Whether a request has waited longer than `SuspectAfterMs` (then the workers are probed). */
  waiting(olderThanMs: number): boolean;
  /** A worker is gone: the requests under way that it may have held are to go again. */
  onLost(): void;
}

/** How long a request waits before its worker is looked after: most are answered well within it. */
export const SuspectAfterMs = 250;
const CensusEveryMs = 5000;
/** A census and a probe round take a worker some 100 and 200 ms: the edge waits a little longer. */
const CensusWaitMs = 1000;
const ProbeWaitMs = 500;

export function watchWorkers(deps: WorkerWatchDeps): WorkerWatch {
  const { nc } = deps;
  /** Workers by id, with the census they last answered. */
  const known = new Map<string, number>();
  let census = 0;
  let probing = false;

  const ask = async <R>(subject: string, payload: unknown, timeout: number, parse: (data: unknown) => R | undefined): Promise<R | undefined> => {
    try {
      const msg = await nc.request(subject, JSON.stringify(payload), { timeout });
      // An error reply carries the service error headers; its body is not the answer.
      return msg.headers?.get(ErrorHeaders.code) ? undefined : parse(JSON.parse(msg.string()));
    } catch {
      // No worker, or none in time: the next round asks again.
      return undefined;
    }
  };

  const takeCensus = async () => {
    const round = ++census;
    const answer = await ask(system.census.subject, {}, CensusWaitMs, (d) => system.census.reply.safeParse(d).data);
    if (answer) for (const id of answer.ids) known.set(id, round);
    // A worker missing from two censuses in a row is forgotten (it stopped, or never answers).
    for (const [id, seen] of known) if (seen < round - 2) known.delete(id);
  };
  const probe = async () => {
    if (probing || known.size === 0 || !deps.waiting(SuspectAfterMs)) return;
    probing = true;
    try {
      const answer = await ask(system.probe.subject, { ids: [...known.keys()] }, ProbeWaitMs, (d) => system.probe.reply.safeParse(d).data);
      let lost = false;
      for (const id of answer?.gone ?? []) lost = known.delete(id) || lost;
      if (lost) deps.onLost();
    } finally {
      probing = false;
    }
  };

  void takeCensus();
  const censusTimer = setInterval(() => void takeCensus(), CensusEveryMs);
  const probeTimer = setInterval(() => void probe(), SuspectAfterMs);
  censusTimer.unref();
  probeTimer.unref();
  return {
    stop() {
      clearInterval(censusTimer);
      clearInterval(probeTimer);
    },
  };
}
