/**
 * Follows a project's events through an integration of kind `nats` (POST /{project}/integrations
 * answers its credential), as a PoS integrator would, and prints one JSON line per event.
 * docs/integrators.md shows it ("Following events with an integration's credential").
 *
 *   NATS_URL=nats://127.0.0.1:4222 node dist/scripts/follow-events.js --creds integration.creds
 *
 * The credential may read one consumer, which is read from its permissions (--consumer names it
 * instead). Stop it with Ctrl-C (or SIGTERM); started again, it goes on after the last event it
 * acknowledged.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
// --- the example (docs/integrators.md shows it)
import { jetstream } from '@nats-io/jetstream';
import { connect, credsAuthenticator } from '@nats-io/transport-node';

const { creds, consumer } = options(); // --creds, and the integration's `nats.consumer`
const nc = await connect({
  servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
  // Read at every connect: a rotated credential written over the file is taken when the client reconnects.
  authenticator: credsAuthenticator(() => readFileSync(creds)),
});
// The integration's durable consumer: the platform made it with the integration's filter, and the
// server keeps its place across restarts of this follower and of NATS.
const messages = await (await jetstream(nc).consumers.get('EVENTS', consumer)).consume();
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void messages.close());
process.stderr.write(`following ${consumer}\n`);

for await (const m of messages) {
  const event = m.json(); // the payload: /asyncapi.json has its schema
  // Handle it here, idempotently: an event not acknowledged in time (ack_wait, 30 s) comes again
  // (m.redelivered); its Nats-Msg-Id names it.
  process.stdout.write(`${JSON.stringify({ seq: m.seq, subject: m.subject, msgId: m.headers?.get('Nats-Msg-Id'), redelivered: m.redelivered, event })}\n`);
  m.ack(); // handled: a restart goes on after it
}
await nc.drain();
// --- end of the example

function options(): { creds: string; consumer: string } {
  const { values } = parseArgs({ options: { creds: { type: 'string' }, consumer: { type: 'string' } } });
  if (!values.creds) {
    process.stderr.write('usage: NATS_URL=nats://host:port node dist/scripts/follow-events.js --creds <integration.creds> [--consumer <name>]\n');
    process.exit(2);
  }
  const consumer = values.consumer ?? grantedConsumer(readFileSync(values.creds, 'utf8'));
  if (!consumer) {
    process.stderr.write('follow-events: the credential names no consumer: give --consumer (the integration\'s `nats.consumer`)\n');
    process.exit(2);
  }
  return { creds: values.creds, consumer };
}

/** The consumer an integration's credential is granted (its user JWT's permissions). */
function grantedConsumer(creds: string): string | undefined {
  const jwt = /-----BEGIN NATS USER JWT-----\s*(\S+)/.exec(creds)?.[1] ?? '';
  try {
    const { nats } = JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8')) as { nats?: { pub?: { allow?: string[] } } };
    const next = nats?.pub?.allow?.find((s) => s.startsWith('$JS.API.CONSUMER.MSG.NEXT.EVENTS.'));
    return next?.slice('$JS.API.CONSUMER.MSG.NEXT.EVENTS.'.length);
  } catch {
    return undefined;
  }
}
