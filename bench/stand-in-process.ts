import { setPriority } from 'node:os';
import { createInterface } from 'node:readline';
import { startFiskalyStandIn } from '../test/support/fiskaly-stand-in.js';
import { startStandIn } from './fulfillment-stand-in.js';

/**
 * `node dist/bench/stand-in-process.js fiskaly|fulfillment`: a stand-in of an outside service in a
 * process of its own (stand-ins.ts starts it). An outside service runs elsewhere; on the bench's
 * event loop, its answers would wait for the load generator and the flows for its answers, which
 * no real TSE or fulfillment service does to a sale. Its CPU still counts, as the bench's.
 *
 * It writes one JSON line when it listens (what a client needs to call it), then answers each JSON
 * line on stdin with one line on stdout: `{"set": {...}}` changes its behaviour (`delayMs`,
 * `failureRate`), `{"stats": true}` tells what it was asked.
 */
const kind = process.argv[2];
// The lowest CPU priority: on the bench's two cores it takes only what the service, Postgres and NATS
// leave, as an outside service on its own machine takes none of theirs. A sale never waits for its
// answers (they are jobs), so this changes what a flow costs the service, not what it measures.
setPriority(19);
const stops: Array<() => Promise<void>> = [];

type Handle = { info: Record<string, unknown>; set(options: Record<string, unknown>): void; stats(): unknown };

async function start(): Promise<Handle> {
  if (kind === 'fiskaly') {
    const fiskaly = await startFiskalyStandIn({ teardown: (stop) => stops.push(stop) });
    return {
      info: { url: fiskaly.url, tssId: fiskaly.tssId, apiKey: fiskaly.apiKey, apiSecret: fiskaly.apiSecret, adminPin: fiskaly.adminPin },
      set: (options) => {
        if (typeof options.delayMs === 'number') fiskaly.delayMs = options.delayMs;
      },
      stats: () => ({
        signatures: fiskaly.signatureCounter(),
        calls: fiskaly.calls.length,
        revisionCalls: fiskaly.calls.filter((c) => c.method === 'PUT' && c.path.includes('/tx/')).length,
      }),
    };
  }
  if (kind === 'fulfillment') {
    const service = await startStandIn();
    stops.push(() => new Promise((resolve) => service.server.close(() => resolve())));
    return {
      info: { url: service.url },
      set: (options) => {
        if (typeof options.failureRate === 'number') service.failureRate = options.failureRate;
      },
      stats: () => ({ calls: service.calls, applied: [...service.applied] }),
    };
  }
  throw new Error(`unknown stand-in ${kind}; known: fiskaly, fulfillment`);
}

const handle = await start();
process.stdout.write(`${JSON.stringify(handle.info)}\n`);
for await (const line of createInterface({ input: process.stdin })) {
  const command = JSON.parse(line) as { set?: Record<string, unknown>; stats?: boolean };
  if (command.set) handle.set(command.set);
  process.stdout.write(`${JSON.stringify(command.stats ? handle.stats() : {})}\n`);
}
// stdin closed: the bench is done with it.
for (const stop of stops) await stop();
process.exit(0);
