import { connect, credsAuthenticator } from '@nats-io/transport-node';

/**
 * Hands an account JWT to the NATS servers: a request on `$SYS.REQ.CLAIMS.UPDATE` as the system
 * account's user, which every server of a cluster receives; each one with the `full` resolver keeps
 * the JWT if it is no older than the one it holds, applies it (closing the connections of users it
 * now revokes) and answers. Resolves once a server answered that it took it.
 */
export interface PushTarget {
  /** NATS_URL: one server or the comma-separated nodes of a cluster. */
  servers: string;
  /** The system user's .creds text. */
  systemCreds: string;
  tls?: { caFile?: string; certFile?: string; keyFile?: string };
}

export async function pushAccountJwt(target: PushTarget, jwt: string, timeoutMs = 5000): Promise<void> {
  const nc = await connect({
    servers: target.servers.split(',').map((s) => s.trim()).filter(Boolean),
    name: 'checkout-platform-account-update',
    authenticator: credsAuthenticator(new TextEncoder().encode(target.systemCreds)),
    timeout: timeoutMs,
    maxReconnectAttempts: 0,
    ...(target.tls ? { tls: target.tls } : {}),
  });
  try {
    const reply = await nc.request('$SYS.REQ.CLAIMS.UPDATE', jwt, { timeout: timeoutMs });
    const answer = reply.json<{ data?: { code?: number; message?: string }; error?: { code?: number; description?: string } }>();
    if (answer.error || answer.data?.code !== 200) throw new Error(`the NATS server did not take the account JWT: ${answer.error?.description ?? JSON.stringify(answer)}`);
  } finally {
    await nc.close();
  }
}
