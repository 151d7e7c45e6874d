import { setTimeout as sleep } from 'node:timers/promises';
import {
  JetStreamApiCodes,
  JetStreamApiError,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type StreamInfo,
} from '@nats-io/jetstream';
import { errors, nanos, type NatsConnection } from '@nats-io/transport-node';
import type { Logger } from '../logger.js';

export interface StreamSpec {
  name: string;
  subjects: readonly string[];
  /** How long messages are kept. */
  maxAgeMs: number;
  /** How long a Nats-Msg-Id is remembered to drop a repeated publish. */
  duplicateWindowMs: number;
  /** `limits` (default): kept until max age; `workqueue`: a message is gone once a consumer acked it. */
  retention?: 'limits' | 'workqueue';
  /** Copies of the stream on as many nodes of a NATS cluster (JETSTREAM_REPLICAS; default 1). */
  replicas?: number;
}

/**
 * Creates the stream, or brings an existing one to this configuration, its replica count included
 * (nats-server 2.9 moves a stream from 1 to 3 replicas and back by an update; replicas starting
 * together may race to create it: the loser updates). Uses only what nats-server 2.9 has. True when
 * this call made it.
 */
export async function ensureStream(nc: NatsConnection, spec: StreamSpec, log?: Logger): Promise<boolean> {
  const config = {
    subjects: [...spec.subjects],
    storage: StorageType.File,
    retention: spec.retention === 'workqueue' ? RetentionPolicy.Workqueue : RetentionPolicy.Limits,
    max_age: nanos(spec.maxAgeMs),
    duplicate_window: nanos(spec.duplicateWindowMs),
    num_replicas: spec.replicas ?? 1,
  };
  return whileJetStreamStarts(log, `stream ${spec.name}`, async () => {
    const jsm = await jetstreamManager(nc);
    for (let attempt = 0; ; attempt++) {
      try {
        await jsm.streams.info(spec.name);
        await jsm.streams.update(spec.name, config);
        return false;
      } catch (err) {
        if (!(err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound)) throw replicaTrouble(err, spec.name, config.num_replicas);
      }
      let made: StreamInfo;
      try {
        made = await jsm.streams.add({ name: spec.name, ...config });
      } catch (err) {
        // Another replica created it between our two calls: update it on the next round.
        if (attempt >= 2) throw replicaTrouble(err, spec.name, config.num_replicas);
        continue;
      }
      if (!builtOnRemains(made)) {
        // Updated once as made: a work queue stream made again after a loss, with its consumers made
        // at once, kept their pulls waiting and delivered nothing in about a third of the runs of
        // test/healing-jobs.test.ts on nats-server 2.9.10; after this update, in none of ten.
        await jsm.streams.update(spec.name, config);
        return true;
      }
      // nats-server 2.9 tears a deleted stream's files down partly in the background: a stream made
      // again at once under the same name can find what is left of them (the old stream's last
      // sequence, a block being removed) and refuse every message it is sent ("error opening msg
      // block file"). Such a stream is deleted and made again once the old files are gone.
      log?.warn({ stream: spec.name, state: made.state, created: made.created }, 'a stream made again found the files of the one before; deleted and made again');
      if (attempt >= RemainsAttempts) throw new Error(`stream ${spec.name} is made again on the files of the one before (nats-server); delete it and start again`);
      // A refusal to delete leaves the broken stream in place: it fails this call rather than pass as made.
      await jsm.streams.delete(spec.name).catch((err: unknown) => {
        if (!(err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound)) throw err;
      });
      await sleep(StoreSettleMs * (attempt + 1));
    }
  });
}

/** How long nats-server is given to finish removing a deleted stream's files before it is made again. */
export const StoreSettleMs = 500;
const RemainsAttempts = 5;

/**
 * A stream just made that holds the state of one before it: a message (its last sequence) older
 * than the stream itself, which a new stream cannot have (another process's first publish comes
 * after the creation).
 */
function builtOnRemains(made: StreamInfo): boolean {
  return made.state.last_seq > 0 && timeNanos(made.state.last_ts) < timeNanos(made.created);
}

/** Nanoseconds since the epoch of an RFC 3339 time with up to nine fractional digits (a stream's `created`, a message's time). */
export function timeNanos(rfc3339: string): number {
  const fraction = /\.(\d+)/.exec(rfc3339)?.[1] ?? '';
  return Date.parse(rfc3339) * 1e6 + Number(fraction.slice(3, 9).padEnd(6, '0'));
}

/**
 * Gives an existing stream (a key-value bucket's `KV_<bucket>`) `replicas` copies, if it has
 * another count: the client libraries create buckets with a replica count but never change it.
 */
export async function ensureReplicas(nc: NatsConnection, stream: string, replicas: number, log?: Logger): Promise<void> {
  await whileJetStreamStarts(log, `stream ${stream}`, async () => {
    const jsm = await jetstreamManager(nc);
    const info = await jsm.streams.info(stream);
    if (info.config.num_replicas === replicas) return;
    await jsm.streams.update(stream, { ...info.config, num_replicas: replicas }).catch((err: unknown) => {
      throw replicaTrouble(err, stream, replicas);
    });
    log?.info({ stream, from: info.config.num_replicas, to: replicas }, 'stream replicas changed');
  });
}

/** How long a starting process waits for JetStream (a cluster electing its leader, a node coming up). */
const JetStreamWaitMs = 60_000;

/**
 * Runs `work` (JetStream API calls), again while JetStream cannot answer yet: a cluster that has
 * just started elects its metadata leader a few seconds after its nodes are up, and until a
 * quorum of nodes runs, JetStream answers nothing. Gives up after a minute with the last error.
 */
export async function whileJetStreamStarts<T>(log: Logger | undefined, what: string, work: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + JetStreamWaitMs;
  let nextLog = Date.now() + 5000;
  for (let delay = 250; ; delay = Math.min(delay * 2, 2000)) {
    try {
      return await work();
    } catch (err) {
      if (!isJetStreamStarting(err) || Date.now() + delay > deadline) throw err;
      if (Date.now() >= nextLog) {
        log?.warn({ err, what }, 'waiting for JetStream to answer');
        nextLog = Date.now() + 5000;
      }
      await sleep(delay);
    }
  }
}

/** No JetStream server answers yet (no leader, no quorum), as opposed to a refusal. */
function isJetStreamStarting(err: unknown): boolean {
  return (
    err instanceof errors.TimeoutError ||
    err instanceof errors.NoRespondersError ||
    err instanceof errors.RequestError ||
    // The client's "jetstream is not enabled" for no responders on the JetStream API.
    (err instanceof Error && err.cause instanceof errors.RequestError && err.cause.isNoResponders()) ||
    // 10008 "JetStream system temporarily unavailable" and its kin.
    (err instanceof JetStreamApiError && err.status === 503)
  );
}

function replicaTrouble(err: unknown, stream: string, replicas: number): unknown {
  if (replicas > 1 && err instanceof JetStreamApiError && err.status !== 404) {
    return new Error(`stream ${stream} cannot have ${replicas} replicas (JETSTREAM_REPLICAS): ${err.message}`, { cause: err });
  }
  return err;
}
