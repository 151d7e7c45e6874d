import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, credsAuthenticator, nanos, type NatsConnection } from '@nats-io/transport-node';
import { integrationConsumerConfig } from '../../actors/integrations/nats-access.js';
import { integrationAccountClaims } from '../../src/infra/nats-auth/accounts.js';
import { encodeAccountJwt, issueUser, newAccountKey, systemCreds } from '../../src/infra/nats-auth/authority.js';
import { pushAccountJwt } from '../../src/infra/nats-auth/push.js';
import { integrationPermissions } from '../../src/infra/nats-auth/permissions.js';
import { prepareSpawnedTrust } from '../../src/infra/nats-auth/spawned.js';
import { startNatsServer } from '../../src/infra/nats.js';
import { createLogger } from '../../src/logger.js';
import { createKeyRing, parseKey } from '../../src/secrets/key-ring.js';
import { loadConfig } from '../../src/config.js';
import { cpuWatch, type CpuTimes } from '../cpu.js';

/**
 * What an integration's pull costs through its own account (issue 47: within 1.10 of before), side
 * by side in one run on one nats-server with the platform's trust: the same events read through two
 * identical consumers on EVENTS, by a user inside the platform's account as integrations were
 * before (a direct pull), and by a user of an integration's account (a pull across a service
 * import, whose answers the server maps back). Each reader fetches batches of 100 and acknowledges
 * each event, as an integrator's program does; turns alternate. CPU per pulled event: nats-server's
 * and the reader's (this process).
 */
const EventsPerTurn = Number(process.env.BENCH_PULL_EVENTS ?? 20_000);
const Turns = 4;
const Batch = 100;
const EventBytes = 900;

export async function integrationPullScenario(): Promise<string[]> {
  const dir = await mkdtemp(path.join(tmpdir(), 'cp-bench-pull-'));
  const log = createLogger({ level: 'silent' });
  const trust = await prepareSpawnedTrust(dir, createKeyRing(parseKey(Buffer.alloc(32, 9).toString('base64'))));
  const storeDir = path.join(dir, 'nats');
  const nats = await startNatsServer({ storeDir, log, configFile: trust.configFile });
  const connections: NatsConnection[] = [];
  const connectWith = async (creds: string) => {
    const nc = await connect({ servers: nats.url, authenticator: credsAuthenticator(new TextEncoder().encode(creds)), noAsyncTraces: true });
    connections.push(nc);
    return nc;
  };
  try {
    const authority = trust.folder.authority;
    const admin = await connectWith(await readFile(trust.folder.creds.admin, 'utf8'));
    const jsm = await jetstreamManager(admin);
    await jsm.streams.add({ name: 'EVENTS', subjects: ['events.>'] });
    const limits = loadConfig({}).integrations.nats;

    // Before: a user of the platform's account with an integration's permissions.
    const before = { consumer: 'integration-beforeaaaaaaaaaaaaaa', inboxPrefix: '_INBOX_before' };
    await jsm.consumers.add('EVENTS', { ...integrationConsumerConfig(before.consumer, 'events.bench.>', 1), deliver_policy: DeliverPolicy.All, ack_policy: AckPolicy.Explicit, ack_wait: nanos(60_000) });
    const beforeUser = issueUser(authority, 'before', integrationPermissions(before, limits));

    // Now: a user of an integration's own account.
    const now = { consumer: 'integration-nowaaaaaaaaaaaaaaaaa', inboxPrefix: '_INBOX_now' };
    await jsm.consumers.add('EVENTS', { ...integrationConsumerConfig(now.consumer, 'events.bench.>', 1), deliver_policy: DeliverPolicy.All, ack_policy: AckPolicy.Explicit, ack_wait: nanos(60_000) });
    const account = newAccountKey();
    const claims = integrationAccountClaims({ platform: authority.account.publicKey, signingKey: authority.account.signingKey, consumer: now.consumer, limits });
    await pushAccountJwt({ servers: nats.url, systemCreds: systemCreds(authority) }, encodeAccountJwt(authority.operator, { name: 'bench integration', publicKey: account, claims }, Math.floor(Date.now() / 1000)));
    const nowUser = issueUser(authority, 'now', integrationPermissions(now, limits), { issuerAccount: account });

    const readers = [
      { name: 'platform account (before)', consumer: before.consumer, nc: await connectWith(beforeUser.creds) },
      { name: "integration's account (now)", consumer: now.consumer, nc: await connectWith(nowUser.creds) },
    ];
    const js = jetstream(admin);
    const payload = JSON.stringify({ order: { id: 'x'.repeat(36), lineItems: [{ sku: 'y'.repeat(EventBytes - 120) }] } });
    const watch = cpuWatch({ servicePids: [], natsStoreDir: storeDir });
    const spent = readers.map(() => ({ server: 0, reader: 0, events: 0 }));
    for (let turn = 0; turn < Turns; turn++) {
      // Each turn publishes its events once; both consumers see them, and each reader reads its copy in its own slot.
      for (let i = 0; i < EventsPerTurn; i += 500) {
        await Promise.all(Array.from({ length: Math.min(500, EventsPerTurn - i) }, (_, k) => js.publish(`events.bench.order.${turn}-${i + k}.final`, payload)));
      }
      const order = turn % 2 === 0 ? [0, 1] : [1, 0];
      for (const r of order) {
        const reader = readers[r]!;
        const consumer = await jetstream(reader.nc).consumers.get('EVENTS', reader.consumer);
        const a = await watch.sample();
        const cpuBefore = process.cpuUsage();
        let read = 0;
        while (read < EventsPerTurn) {
          const messages = await consumer.fetch({ max_messages: Batch, expires: 2000 });
          for await (const m of messages) {
            m.ack();
            read++;
          }
        }
        await reader.nc.flush();
        const b = await watch.sample();
        const own = process.cpuUsage(cpuBefore);
        spent[r]!.server += serverMs(a, b);
        spent[r]!.reader += (own.user + own.system) / 1000;
        spent[r]!.events += read;
      }
    }
    const lines = [`integration pull: ${EventsPerTurn} events of ${EventBytes} bytes per turn, ${Turns} turns each, batches of ${Batch}, each event acked`];
    const perEvent = spent.map((s) => (s.server + s.reader) / s.events);
    readers.forEach((reader, i) => {
      const s = spent[i]!;
      lines.push(`  ${reader.name}: CPU per event nats-server ${((s.server / s.events) * 1000).toFixed(1)} µs, reader ${((s.reader / s.events) * 1000).toFixed(1)} µs; total ${(perEvent[i]! * 1000).toFixed(1)} µs`);
    });
    const ratio = perEvent[1]! / perEvent[0]!;
    lines.push(`ratio integration-pull: ${ratio.toFixed(3)} (goal <= 1.10: ${ratio <= 1.1 ? 'met' : 'not met'})`);
    return lines;
  } finally {
    for (const nc of connections) await nc.close().catch(() => {});
    await nats.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

function serverMs(a: CpuTimes, b: CpuTimes): number {
  return b['nats-server'] - a['nats-server'];
}
