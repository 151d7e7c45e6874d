import type { NatsConnection } from '@nats-io/transport-node';

/**
 * The platform's events (subjects/events.ts) as the edge follows them for a browser that watches
 * live (server-sent events): a plain NATS subscription, which sees what the outbox relay publishes
 * to JetStream as it happens and keeps no state on the server. It may see an event twice (a relay
 * that stopped between publishing and recording it): events carry the process's version.
 */
export interface EventFeed {
  /** Calls `onEvent` with each event's payload on `subject` until the returned stop is called; resolves once the server knows the subscription. */
  follow(subject: string, onEvent: (payload: Uint8Array) => void): Promise<() => void>;
}

export function natsEventFeed(nc: NatsConnection): EventFeed {
  return {
    async follow(subject, onEvent) {
      const subscription = nc.subscribe(subject, { callback: (err, msg) => {
          if (!err) onEvent(msg.data);
        }, });
      await nc.flush();
      return () => subscription.unsubscribe();
    },
  };
}
