import { createHash } from 'node:crypto';
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import { Kvm, type KV, type KvWatchEntry } from '@nats-io/kv';
import type { NatsConnection, QueuedIterator } from '@nats-io/transport-node';
import { ensureReplicas, whileJetStreamStarts } from '../infra/jetstream.js';
import type { Logger } from '../logger.js';

/**
 * Failed sign-in counts, a fixed window per key (client address or credential) that starts at its
 * first failure, in the shape of a @fastify/rate-limit store (`incr`, `read`, `child`).
 *
 * `read` answers from this process's memory only, so that a request that signs in costs no I/O.
 * With a NATS connection the counts are shared by every edge through a JetStream key-value bucket:
 * `incr` (failures only) counts in the bucket with compare-and-set on the entry's revision, and
 * each edge watches the bucket, so a key blocked through one edge is blocked in the memory of all.
 */
export interface Count {
  current: number;
  ttl: number;
}

type Callback = (err: Error | null, result: Count) => void;

export interface FailureCounts {
  incr(key: string, cb: Callback, timeWindow: number, max: number): void;
  read(key: string, cb: Callback, timeWindow: number, max: number): void;
  child(): FailureCounts;
  /** No failure is counted in any live window: nobody is blocked, and a sign-in need not ask. */
  none(): boolean;
  stop(): Promise<void>;
}

interface Window {
  count: number;
  start: number;
}

/** The key-value bucket the edges share their counts in (its name is in the edge's NATS permissions). */
export const FailureCountsBucket = 'edge-auth-failures';
const Bucket = FailureCountsBucket;
const MaxCasAttempts = 10;

export async function createFailureCounts(options: {
  windowMs: number;
  nc?: NatsConnection;
  /** Copies of the bucket on a NATS cluster (JETSTREAM_REPLICAS; default 1). */
  replicas?: number;
  log: Logger;
}): Promise<FailureCounts> {
  const { windowMs, log } = options;
  const windows = new Map<string, Window>();
  const live = (w: Window | undefined, now: number): w is Window => w !== undefined && w.start + windowMs > now;
  const countOf = (w: Window, now: number): Count => ({ current: w.count, ttl: w.start + windowMs - now });
  const remember = (key: string, w: Window) => {
    const known = windows.get(key);
    // Watch events and this process's own answers arrive in any order: the later window or the higher count wins.
    if (!known || w.start > known.start || (w.start === known.start && w.count > known.count)) windows.set(key, w);
  };
  // Keys of many addresses or guessed users would stay in memory after their window: sweep them out.
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const [key, w] of windows) if (!live(w, now)) windows.delete(key);
  }, windowMs);
  sweep.unref();

  let kv: KV | undefined;
  let watch: QueuedIterator<KvWatchEntry> | undefined;
  let watching: Promise<void> | undefined;
  if (options.nc) {
    const kvm = new Kvm(options.nc);
    const replicas = options.replicas ?? 1;
    // The entries expire with the window; an edge that finds the bucket made by another edge uses
    // it as it is, but with this replica count.
    kv = await whileJetStreamStarts(log, `bucket ${Bucket}`, () => kvm.create(Bucket, { history: 1, ttl: windowMs, replicas }).catch(() => kvm.open(Bucket)));
    await ensureReplicas(options.nc, `KV_${Bucket}`, replicas, log);
    watch = await kv.watch();
    const iterator = watch;
    watching = (async () => {
      for await (const entry of iterator) {
        if (entry.operation !== 'PUT') windows.delete(entry.key);
        else {
          const w = parseWindow(entry.string());
          if (w) remember(entry.key, w);
        }
      }
    })().catch((err: unknown) => log.error({ err }, 'auth failure watch ended'));
  }

  const keyOf = (key: string) => createHash('sha256').update(key).digest('hex').slice(0, 40);

  async function count(key: string): Promise<Window> {
    const now = Date.now();
    if (!kv) {
      const known = windows.get(key);
      const next = live(known, now) ? { count: known.count + 1, start: known.start } : { count: 1, start: now };
      windows.set(key, next);
      return next;
    }
    for (let attempt = 0; attempt < MaxCasAttempts; attempt++) {
      const entry = await kv.get(key);
      const known = entry?.operation === 'PUT' ? parseWindow(entry.string()) : undefined;
      const now = Date.now();
      const next = live(known, now) ? { count: known.count + 1, start: known.start } : { count: 1, start: now };
      try {
        if (entry) await kv.update(key, JSON.stringify(next), entry.revision);
        else await kv.create(key, JSON.stringify(next));
        remember(key, next);
        return next;
      } catch (err) {
        // Another edge counted a failure of the same key first: count again on top of it.
        if (err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamWrongLastSequence) continue;
        throw new Error('counting an auth failure failed', { cause: err });
      }
    }
    throw new Error(`counting an auth failure failed: ${MaxCasAttempts} concurrent updates`);
  }

  const counts: FailureCounts = {
    incr(key, cb) {
      count(keyOf(key)).then(
        (w) => cb(null, countOf(w, Date.now())),
        (err: unknown) => cb(err instanceof Error ? err : new Error(String(err)), { current: 0, ttl: 0 }),
      );
    },
    read(key, cb) {
      const now = Date.now();
      const w = windows.get(keyOf(key));
      cb(null, live(w, now) ? countOf(w, now) : { current: 0, ttl: 0 });
    },
    // Every limiter made with this store counts in the same windows (its keys carry their kind).
    child: () => counts,
    // Windows past their end are swept once per window: until then they count as some.
    none: () => windows.size === 0,
    async stop() {
      clearInterval(sweep);
      watch?.stop();
      await watching;
    },
  };
  return counts;
}

function parseWindow(text: string): Window | undefined {
  try {
    const value = JSON.parse(text) as Partial<Window>;
    return typeof value.count === 'number' && typeof value.start === 'number' ? { count: value.count, start: value.start } : undefined;
  } catch {
    return undefined;
  }
}
