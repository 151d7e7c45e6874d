import { JetStreamApiCodes, JetStreamApiError, jetstreamManager, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import { nanos, type NatsConnection } from '@nats-io/transport-node';

export interface StreamSpec {
  name: string;
  subjects: readonly string[];
  /** How long messages are kept. */
  maxAgeMs: number;
  /** How long a Nats-Msg-Id is remembered to drop a repeated publish. */
  duplicateWindowMs: number;
  /** `limits` (default): kept until max age; `workqueue`: a message is gone once a consumer acked it. */
  retention?: 'limits' | 'workqueue';
}

/**
 * Creates the stream, or brings an existing one to this configuration (replicas starting together
 * may race to create it: the loser updates). Uses only what nats-server 2.9 has.
 */
export async function ensureStream(nc: NatsConnection, spec: StreamSpec): Promise<void> {
  const jsm = await jetstreamManager(nc);
  const config = {
    subjects: [...spec.subjects],
    storage: StorageType.File,
    retention: spec.retention === 'workqueue' ? RetentionPolicy.Workqueue : RetentionPolicy.Limits,
    max_age: nanos(spec.maxAgeMs),
    duplicate_window: nanos(spec.duplicateWindowMs),
  };
  for (let attempt = 0; ; attempt++) {
    try {
      await jsm.streams.info(spec.name);
      await jsm.streams.update(spec.name, config);
      return;
    } catch (err) {
      if (!(err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound)) throw err;
    }
    try {
      await jsm.streams.add({ name: spec.name, ...config });
      return;
    } catch (err) {
      // Another replica created it between our two calls: update it on the next round.
      if (attempt >= 2) throw err;
    }
  }
}
