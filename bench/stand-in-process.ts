import { setPriority } from 'node:os';
import { createInterface } from 'node:readline';
import { startFiskalyStandIn } from '../test/support/fiskaly-stand-in.js';
import { startStandIn } from './fulfillment-stand-in.js';
import { startWebhookStandIn } from './webhook-stand-in.js';
import type { StandInKind, StandIns } from './stand-ins.js';

/**
 * `node dist/bench/stand-in-process.js fiskaly|fulfillment|webhook`: a stand-in of an outside service in a
 * process of its own (stand-ins.ts starts it and speaks to it). An outside service runs on other
 * machines; in the bench's process, its work would hold up the load generator.
 *
 * It writes one JSON line when it listens (StandIns[kind].info), then answers each JSON line on
 * stdin with one line on stdout: `{"set": {...}}` changes its behaviour (StandIns[kind].settings),
 * `{"stats": true}` tells what it was asked (StandIns[kind].stats).
 */
const kind = process.argv[2] as StandInKind;
// The lowest CPU priority: on the bench's two cores it takes only what the service, Postgres and
// NATS leave, as an outside service on its own machine takes none of theirs. A sale never waits for
// its answers (they are jobs); its CPU still counts, as the bench's.
setPriority(19);
const stops: Array<() => Promise<void>> = [];

interface Handle<K extends StandInKind> {
  info: StandIns[K]['info'];
  set(settings: StandIns[K]['settings']): void;
  stats(): StandIns[K]['stats'];
}

async function start(): Promise<Handle<StandInKind>> {
  if (kind === 'fiskaly') {
    const fiskaly = await startFiskalyStandIn({ teardown: (stop) => stops.push(stop) });
    const handle: Handle<'fiskaly'> = {
      info: { url: fiskaly.url, tssId: fiskaly.tssId, apiKey: fiskaly.apiKey, apiSecret: fiskaly.apiSecret, adminPin: fiskaly.adminPin },
      set: ({ delayMs }) => {
        if (delayMs !== undefined) fiskaly.delayMs = delayMs;
      },
      stats: () => ({
        signatures: fiskaly.signatureCounter(),
        calls: fiskaly.calls.length,
        revisionCalls: fiskaly.calls.filter((c) => c.method === 'PUT' && c.path.includes('/tx/')).length,
      }),
    };
    return handle;
  }
  if (kind === 'fulfillment') {
    const service = await startStandIn();
    stops.push(() => new Promise((resolve) => service.server.close(() => resolve())));
    const handle: Handle<'fulfillment'> = {
      info: { url: service.url },
      set: ({ failureRate }) => {
        if (failureRate !== undefined) service.failureRate = failureRate;
      },
      stats: () => ({ calls: service.calls, applied: [...service.applied] }),
    };
    return handle;
  }
  if (kind === 'webhook') {
    const receiver = await startWebhookStandIn();
    stops.push(() => receiver.close());
    const handle: Handle<'webhook'> = {
      info: { url: receiver.url, tlsUrl: receiver.tlsUrl, caFile: receiver.caFile },
      set: ({ reset }) => {
        if (reset) receiver.reset();
      },
      stats: () => receiver.stats(),
    };
    return handle;
  }
  throw new Error(`unknown stand-in ${kind}; known: fiskaly, fulfillment, webhook`);
}

const handle = await start();
process.stdout.write(`${JSON.stringify(handle.info)}\n`);
for await (const line of createInterface({ input: process.stdin })) {
  const command = JSON.parse(line) as { set?: StandIns[StandInKind]['settings']; stats?: boolean };
  if (command.set) handle.set(command.set);
  process.stdout.write(`${JSON.stringify(command.stats ? handle.stats() : {})}\n`);
}
// stdin closed: the bench is done with it.
for (const stop of stops) await stop();
process.exit(0);
