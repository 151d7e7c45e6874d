import type { MsgHdrs, NatsConnection } from '@nats-io/transport-node';

/**
 * Publishes queued during one turn of the event loop go out together. The NATS client flushes its
 * buffer at the end of every microtask run, so without this each HTTP request and each reply would
 * cost its own socket write; under load that is most of the message path's CPU. Queued messages
 * are handed to the client in the check phase of the same loop iteration, so no latency is added
 * beyond that iteration.
 */
export interface Publisher {
  publish(subject: string, payload: string | Uint8Array, options?: { reply?: string; headers?: MsgHdrs }, onError?: (err: unknown) => void): void;
  /** Hands everything queued to the client now (before a drain). */
  flush(): void;
}

interface Queued {
  subject: string;
  payload: string | Uint8Array;
  options?: { reply?: string; headers?: MsgHdrs };
  onError?: (err: unknown) => void;
}

export function createPublisher(nc: NatsConnection): Publisher {
  let queue: Queued[] = [];
  let scheduled: NodeJS.Immediate | undefined;

  const flush = () => {
    if (scheduled) clearImmediate(scheduled);
    scheduled = undefined;
    const batch = queue;
    queue = [];
    for (const { subject, payload, options, onError } of batch) {
      try {
        nc.publish(subject, payload, options);
      } catch (err) {
        onError?.(err);
      }
    }
  };

  return {
    publish(subject, payload, options, onError) {
      queue.push({ subject, payload, options, onError });
      scheduled ??= setImmediate(flush);
    },
    flush,
  };
}
