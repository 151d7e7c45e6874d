import { createHash } from 'node:crypto';
import { JetStreamApiCodes, JetStreamApiError, jetstreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { ensureReplicas, whileJetStreamStarts } from '../infra/jetstream.js';
import type { Logger } from '../logger.js';

/**
 * Failed sign-in counts, a fixed window per key (client address or credential) that starts at its
 * first failure, in the shape of a @fastify/rate-limit store (`incr`, `read`, `child`).
 *
 * `read` answers from this process's memory only, so that a request that signs in costs no I/O.
 * With a NATS connection the counts are shared by every edge through a JetStream key-value bucket
 * (made by the workers, ensureFailureCountsBucket): `incr` (failures only) counts in the bucket
 * with compare-and-set on the entry's revision, and the bucket republishes every write it stored on
 * `edge.auth-failures.<key>`, where each edge hears it (a plain subscription: an edge may make no
 * consumer), so a key blocked through one edge is blocked in the memory of all. An edge that starts learns a
 * key's count from the bucket at that key's next failure: it may let one more attempt through
 * before it blocks a key another edge blocked. While the bucket cannot be reached (the workers have
 * not made it yet, NATS is away), failures are counted in this edge's memory.
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
/** Where the bucket republishes each write it stored (`<prefix>.<key>`): every edge hears them there, once. */
export const FailureCountsWrites = 'edge.auth-failures';
const Bucket = FailureCountsBucket;
const MaxCasAttempts = 10;

export async function createFailureCounts(options: {
  windowMs: number;
  nc?: NatsConnection;
  log: Logger;
}): Promise<FailureCounts> {
  const { windowMs, log } = options;
  const windows = new Map<string, Window>();
  const live = (w: Window | undefined, now: number): w is Window => w !== undefined && w.start + windowMs > now;
  const countOf = (w: Window, now: number): Count => ({ current: w.count, ttl: w.start + windowMs - now });
  const remember = (key: string, w: Window) => {
    const known = windows.get(key);
    // Other edges' writes and this process's own answers arrive in any order: the later window or the higher count wins.
    if (!known || w.start > known.start || (w.start === known.start && w.count > known.count)) windows.set(key, w);
  };
  // Keys of many addresses or guessed users would stay in memory after their window: sweep them out.
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const [key, w] of windows) if (!live(w, now)) windows.delete(key);
  }, windowMs);
  sweep.unref();

  let kv: KV | undefined;
  let writes: Subscription | undefined;
  if (options.nc) {
    // Bound without asking JetStream anything: the edge's account reaches the bucket's keys only.
    kv = await new Kvm(options.nc).open(Bucket, { allow_direct: true });
    const prefix = `${FailureCountsWrites}.`;
    writes = options.nc.subscribe(`${prefix}>`, {
      callback: (err, msg) => {
        if (err) return;
        const key = msg.subject.slice(prefix.length);
        const operation = msg.headers?.get('KV-Operation');
        if (operation === 'DEL' || operation === 'PURGE') windows.delete(key);
        else {
          const w = parseWindow(msg.string());
          if (w) remember(key, w);
        }
      },
    });
  }
  let warnedAt = 0;
  const countInMemory = (key: string, cause: unknown): Window => {
    if (Date.now() - warnedAt > windowMs) {
      warnedAt = Date.now();
      log.warn({ err: cause }, 'the failed sign-in bucket cannot be reached: failures are counted in this edge only');
    }
    const now = Date.now();
    const known = windows.get(key);
    const next = live(known, now) ? { count: known.count + 1, start: known.start } : { count: 1, start: now };
    windows.set(key, next);
    return next;
  };

  const keyOf = (key: string) => createHash('sha256').update(key).digest('hex').slice(0, 40);

  async function count(key: string): Promise<Window> {
    if (!kv) return countInMemory(key, undefined);
    try {
      return await countInBucket(kv, key);
    } catch (err) {
      return countInMemory(key, err);
    }
  }

  async function countInBucket(kv: KV, key: string): Promise<Window> {
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
      writes?.unsubscribe();
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

/**
 * The bucket the edges count in (the workers make it: an edge may not): entries expire with the
 * window, and every write is republished for the edges to hear. One made before keeps its
 * settings but takes this replica count; one made without the republishing (before this version:
 * nats-server 2.9 cannot add it to a stream) is made again, forgetting the counts of the current
 * window once.
 */
export async function ensureFailureCountsBucket(nc: NatsConnection, options: { windowMs: number; replicas?: number; log: Logger }): Promise<void> {
  const { log } = options;
  const replicas = options.replicas ?? 1;
  const stream = `KV_${Bucket}`;
  const republish = { src: `$KV.${Bucket}.>`, dest: `${FailureCountsWrites}.>` };
  const kvm = new Kvm(nc);
  await whileJetStreamStarts(log, `bucket ${Bucket}`, async () => {
    const jsm = await jetstreamManager(nc);
    const existing = await jsm.streams.info(stream).catch((err: unknown) => {
      if (err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound) return undefined;
      throw err;
    });
    if (existing && existing.config.republish?.dest !== republish.dest) {
      await jsm.streams.delete(stream);
      log.info({ stream }, 'the failed sign-in bucket was made again to republish its writes (the counts of the current window are forgotten)');
    }
    await kvm.create(Bucket, { history: 1, ttl: options.windowMs, replicas, allow_direct: true, republish });
  });
  await ensureReplicas(nc, stream, replicas, log);
}
