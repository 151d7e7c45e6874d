import type { NatsConnection } from '@nats-io/transport-node';

/**
 * Resolves when the server cut the connection: its first disconnect or error (a revoked user is
 * told so, then disconnected), or its close. `closed()` alone comes late: the client waits its
 * reconnect time (2 s) before it gives up on a server that refused it.
 */
export async function cutOff(nc: NatsConnection): Promise<string> {
  const closed = nc.closed().then(() => 'closed');
  const status = (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect' || s.type === 'error') return s.type;
    }
    return 'closed';
  })();
  return Promise.race([closed, status]);
}

/** The error an operation fails with, or undefined when it succeeds. */
export async function refusal(operation: () => Promise<unknown>): Promise<unknown> {
  try {
    await operation();
    return undefined;
  } catch (err) {
    return err;
  }
}
