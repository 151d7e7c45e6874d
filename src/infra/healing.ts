import { setTimeout as sleep } from 'node:timers/promises';
import { JetStreamApiCodes, JetStreamApiError, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Logger } from '../logger.js';
import { ensureStream, StoreSettleMs, type StreamSpec } from './jetstream.js';

/**
 * The platform heals what is taken from it (docs/operations.md, "Healing"): a stream of its own, or
 * a consumer of its own on it, that disappears (by accident, by an operator, by an attack) is made
 * again with its configuration within HealCheckMs or so, with one error line, and the work it held
 * is sent again from Postgres, which is the record.
 *
 * A watcher looks at its stream's consumers on a timer (one JetStream API request a round: the list
 * of the stream's consumers, which fails when the stream is gone). What is missing is made again.
 * The stream's messages are lost only with the stream itself (or a purge): when the stream is found
 * to be another one than before (its creation time changed, whoever made it again), `renewed` is
 * called with that time, the stream's new life, which the watcher's owner uses to send the lost
 * work again once (Nats-Msg-Ids that name the life: processes that all resend within the duplicate
 * window store it once).
 */
export interface WatchedConsumer {
  name: string;
  /** Makes the consumer with its configuration (it does not exist, or may not); false: another process had made it. */
  ensure(): Promise<boolean | void>;
}

export interface StreamWatch {
  spec: StreamSpec;
  /** The consumers that must exist on the stream now (`fresh`: the stream was just made again: not from a cache). */
  consumers(fresh: boolean): WatchedConsumer[] | Promise<WatchedConsumer[]>;
  /** The stream is another one than when the watch began (made again): its messages were lost. */
  renewed?(life: string): Promise<void>;
}

export interface StreamHealer {
  /** Looks now (tests; a consumer that saw its pull fail) rather than at the next round. */
  check(): Promise<void>;
  /** The stream's life (its creation time) as last seen; undefined before the first look. */
  life(): string | undefined;
  stop(): void;
}

/** How often a watcher looks. */
export const HealCheckMs = 2000;

export function watchStream(nc: NatsConnection, log: Logger, watch: StreamWatch, everyMs = HealCheckMs): StreamHealer {
  const name = watch.spec.name;
  let life: string | undefined;
  /** Renewals whose resend has not succeeded yet: tried again at the next round. */
  let resendDue: string | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;

  const streamLife = async () => (await (await jetstreamManager(nc, { checkAPI: false })).streams.info(name)).created;

  const round = async () => {
    const jsm = await jetstreamManager(nc, { checkAPI: false });
    const lost: string[] = [];
    let present = new Set<string>();
    let gone = false;
    try {
      present = new Set((await jsm.consumers.list(name).next()).map((c) => c.name));
    } catch (err) {
      if (!isMissing(err, JetStreamApiCodes.StreamNotFound)) throw err;
      gone = true;
    }
    let missing = (await watch.consumers(false)).filter((c) => !present.has(c.name));
    // A node of a cluster may list no consumers of a stream that is gone rather than refuse: ask for the stream.
    if (!gone && missing.length) {
      gone = await jsm.streams.info(name).then(
        () => false,
        (err: unknown) => {
          if (isMissing(err, JetStreamApiCodes.StreamNotFound)) return true;
          throw err;
        },
      );
    }
    // The stream gone and made again by another process: that one reported the loss; what this one makes goes to warn.
    let madeElsewhere = false;
    if (gone) {
      // The server may still be removing the deleted stream's files (ensureStream, builtOnRemains).
      await sleep(StoreSettleMs);
      if (await ensureStream(nc, watch.spec, log)) lost.push(`stream ${name}`);
      else madeElsewhere = true;
      missing = await watch.consumers(true);
    } else {
      // A cluster's list can lag behind a consumer just made (a process starting): each is asked for before it counts as lost.
      const found = await Promise.all(
        missing.map((c) =>
          jsm.consumers.info(name, c.name).then(
            () => true,
            (err: unknown) => {
              if (isMissing(err, JetStreamApiCodes.ConsumerNotFound)) return false;
              throw err;
            },
          ),
        ),
      );
      missing = missing.filter((_, i) => !found[i]);
    }
    for (const consumer of missing) {
      if ((await consumer.ensure()) !== false) lost.push(`consumer ${name}/${consumer.name}`);
    }
    const now = await streamLife();
    if (lost.length && madeElsewhere) log.warn({ stream: name, recreated: lost }, `consumers of the stream ${name} made again with it (${lost.join(', ')})`);
    else if (lost.length) log.error({ stream: name, recreated: lost }, `JetStream lost what the platform keeps there (${lost.join(', ')}); made again`);
    if (life === undefined) life = now;
    else if (now !== life) {
      if (!lost.includes(`stream ${name}`)) log.warn({ stream: name }, `stream ${name} was made again elsewhere; its lost work is sent again`);
      life = now;
      resendDue = now;
    }
    if (resendDue && watch.renewed) {
      await watch.renewed(resendDue);
      resendDue = undefined;
    }
  };

  const check = () => {
    running ??= round()
      .catch((err: unknown) => log.debug({ err, stream: name }, 'stream watch round failed; tried again at the next'))
      .finally(() => (running = undefined));
    return running;
  };
  const timer = setInterval(() => {
    if (!stopped) void check();
  }, everyMs).unref();
  void streamLife().then(
    (created) => (life ??= created),
    () => undefined,
  );
  return {
    check,
    life: () => life,
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}

function isMissing(err: unknown, code: number): boolean {
  return err instanceof JetStreamApiError && err.code === code;
}
