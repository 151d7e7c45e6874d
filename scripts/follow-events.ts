/**
 * Follows the platform's events with a durable JetStream consumer, as a PoS integrator would, and
 * prints one JSON line per event. docs/integrators.md shows it ("Following events with a durable
 * JetStream consumer").
 *
 *   NATS_URL=nats://127.0.0.1:<port> node dist/scripts/follow-events.js --project acme-1a2b [--domain pos] [--durable kasse-3]
 *
 * Stop it with Ctrl-C (or SIGTERM); started again with the same --durable, it goes on after the last
 * event it acknowledged.
 */
import { parseArgs } from 'node:util';
// --- the example (docs/integrators.md shows it)
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';

const { project, domain, durable } = options(); // --project, --domain (default pos), --durable
const nc = await connect({ servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222' });
const jsm = await jetstreamManager(nc);
// A durable consumer: the server keeps its place. Adding it again with the same configuration
// changes nothing, so every start may do it.
await jsm.consumers.add('EVENTS', {
  durable_name: durable,
  filter_subject: `events.${project}.${domain}.>`,
  ack_policy: AckPolicy.Explicit,
  deliver_policy: DeliverPolicy.All, // the first start reads every event the stream still keeps
  max_ack_pending: 1, // one event at a time: a redelivery never overtakes a later event
});
const messages = await (await jetstream(nc).consumers.get('EVENTS', durable)).consume();
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void messages.close());
process.stderr.write(`following events.${project}.${domain}.> as ${durable}\n`);

for await (const m of messages) {
  const event = m.json(); // the payload: /asyncapi.json has its schema
  // Handle it here, idempotently: an event not acknowledged in time (ack_wait, 30 s) comes again
  // (m.redelivered); its Nats-Msg-Id names it.
  process.stdout.write(`${JSON.stringify({ seq: m.seq, subject: m.subject, msgId: m.headers?.get('Nats-Msg-Id'), redelivered: m.redelivered, event })}\n`);
  m.ack(); // handled: a restart goes on after it
}
await nc.drain();
// --- end of the example

function options(): { project: string; domain: string; durable: string } {
  const { values } = parseArgs({ options: { project: { type: 'string' }, domain: { type: 'string', default: 'pos' }, durable: { type: 'string' } } });
  if (!values.project) {
    process.stderr.write('usage: NATS_URL=nats://host:port node dist/scripts/follow-events.js --project <id> [--domain pos] [--durable <name>]\n');
    process.exit(2);
  }
  return { project: values.project, domain: values.domain, durable: values.durable ?? `${values.project}-${values.domain}-follower` };
}
