import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import postgres from 'postgres';
import { startNatsServer } from '../../src/infra/nats.js';
import { prepareSpawnedTrust } from '../../src/infra/nats-auth/spawned.js';
import { projectRoot } from '../../src/infra/project-root.js';
import { createLogger } from '../../src/logger.js';
import { createKeyRing, parseKey } from '../../src/secrets/key-ring.js';
import { makeTlsFiles } from '../../test/support/tls.js';
import { addCpuSpent, cpuWatch, emptyCpuTimes, processCpuMs, type CpuTimes, type CpuWatch } from '../cpu.js';
import { createSender, runFlowsInTurns, type FlowDefinition, type FlowResult, type Send } from '../flows.js';
import { startTap, type Capture } from '../floor-capture.js';
import type { PartRun, PartSpec } from '../floor-part.js';
import { loadInTurns, startBench, type Bench, type BareRoute, type LoadResult } from '../harness.js';
import { seedCatalog } from '../seed.js';
import { checkoutCart, checkoutFlow } from './full-flow.js';

/**
 * Issue 51's scenario: how close the service comes to what its own parts cost raw. Each operation
 * (shop get, checkout info, the full checkout flow unsigned and signed by the local signer) is
 * first taken apart on the running service: the statements its pools send (SQL_TRACE_FILE) and the
 * messages that cross its nats-server (a tap on `>`). Then, in one run:
 *
 * - the service's CPU per operation, every process included (the service, its nats-server, its
 *   Postgres), under load (autocannon, 50 connections; the flows 16 at a time);
 * - each raw part, in a process of its own, at the same concurrency, with the libraries the service
 *   uses and the same payloads: the HTTP requests against bare Fastify routes answering the same
 *   JSON; the NATS round trips between two plain clients with the same credentials; the
 *   statements, with their parameters, by `postgres` on pools of the service's sizes; each stream
 *   publish with its ack, each job pulled and acked; the local signer's signatures;
 * - `floor <scenario>: <ratio>`, the service's CPU per operation over the sum of its parts.
 *
 * What the floor leaves out is ours by definition: the edge's auth and validation, the workers'
 * domain code and messages, the outbox (its rows, the relay's transaction), the census and
 * periodic work. The raw NATS round trip is also measured over TLS, for operators who turn it on.
 */
const FlowConcurrency = Number(process.env.BENCH_FLOW_CONCURRENCY ?? 16);
/** Turns of the service's loads, and rounds of each raw part: the least CPU per operation of each is its figure. */
const ServiceTurns = 4;
const PartRounds = 3;
const Connections = 50;
const Goals = { 'shop get': 1.3, 'checkout info': 1.3, 'full flow': 1.5, 'full flow signed': 1.5 } as const;
type Operation = keyof typeof Goals;

/** What an operation is made of, read off the capture. */
interface Anatomy {
  httpRequests: number;
  roundTrips: Array<{ request: number; reply: number }>;
  publishes: Array<{ size: number }>;
  jobsConsumed: number;
  statements: Capture['statements'];
  signatures: number;
}

/**
 * Statements that are no part of an operation though they ran during it: the outbox relay's
 * transaction (the outbox is the design's, above the floor: its publishes are the stream part) and
 * the workers' timers.
 */
const BackgroundStatement = /^\s*(begin|commit|rollback)\b|pg_try_advisory_xact_lock|from closing_schedules/i;

export async function floorScenario(): Promise<string[]> {
  const dir = await mkdtemp(path.join(tmpdir(), 'cp-floor-'));
  const traceFile = path.join(dir, 'statements.jsonl');
  const bench = await startBench({ env: { SQL_TRACE_FILE: traceFile } });
  const tap = await startTap(bench, traceFile);
  const sql = postgres(bench.databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const project = 'bench-floor';
    const signedProject = 'bench-floor-signed';
    await seedCatalog(bench, project, 20_000);
    await seedCatalog(bench, signedProject, 20_000, { provider: 'local' });
    const token = await bench.token({ project, permissions: ['productsRead', 'updatePricingCheckoutProcess', 'ordersRead', 'shopsRead'] });
    const signedToken = await bench.token({ project: signedProject, permissions: ['productsRead', 'updatePricingCheckoutProcess', 'ordersRead'] });
    const flows: Record<'full flow' | 'full flow signed', FlowDefinition<{ id?: string }>> = {
      'full flow': checkoutFlow(project, token),
      'full flow signed': checkoutFlow(signedProject, signedToken),
    };
    const shopPath = `/${project}/shops/bench-shop`;
    const auth = { authorization: `Bearer ${token}` };
    const infoBody = checkoutCart();

    // Each operation once by hand (after a warm-up): what it ran, and the answers a bare route gives.
    const probe = createSender(bench.url, 1);
    const answers: Array<{ method: string; path: string; status: number; body: string }> = [];
    const recording: Send = async (method, requestPath, body, headers) => {
      const response = await probe.send(method, requestPath, body, headers);
      answers.push({ method, path: requestPath, status: response.status, body: response.body });
      return response;
    };
    const runOnce = {
      'shop get': async () => void (await recording('GET', shopPath, undefined, auth)),
      'checkout info': async () => void (await recording('POST', `/${project}/checkout/info`, infoBody, { ...auth, 'content-type': 'application/json' })),
      'full flow': () => runFlowOnce(flows['full flow'], recording),
      'full flow signed': () => runFlowOnce(flows['full flow signed'], recording),
    };
    for (let i = 0; i < 5; i++) for (const operation of Object.values(runOnce)) await operation();
    await bench.backgroundDone();
    const anatomy = {} as Record<Operation, Anatomy>;
    const bareRoutes = {} as Record<Operation, BareRoute[]>;
    for (const operation of Object.keys(Goals) as Operation[]) {
      answers.length = 0;
      const signaturesBefore = await signaturesMade(sql);
      const capture = await tap.capture(runOnce[operation], () => bench.backgroundDone());
      anatomy[operation] = anatomyOf(capture, answers.length, (await signaturesMade(sql)) - signaturesBefore);
      bareRoutes[operation] = routesOf(answers);
    }
    const freshIds = {
      'full flow': processIds(bareRoutes['full flow']),
      'full flow signed': processIds(bareRoutes['full flow signed']),
    };

    // The service under load, every process counted.
    const [shopGet, info] = (await loadInTurns(
      [
        { url: `${bench.url}${shopPath}`, headers: auth, cpu: bench.cpu },
        { url: `${bench.url}/${project}/checkout/info`, method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: infoBody, cpu: bench.cpu },
      ],
      ServiceTurns,
    )) as [LoadResult, LoadResult];
    const duration = Number(process.env.BENCH_DURATION ?? 10);
    const [flow, signedFlow] = (await runFlowsInTurns(bench.url, [flows['full flow'], flows['full flow signed']] as FlowDefinition<unknown>[], {
      concurrency: FlowConcurrency,
      durationSeconds: duration,
      turns: ServiceTurns,
      between: () => bench.backgroundDone(),
      cpu: bench.cpu,
    })) as [FlowResult, FlowResult];
    // The split by process is over all turns; the ratio takes the best turn.
    const per = (cpu: CpuTimes, operations: number): Cost => ({ client: cpu.service / operations, nats: cpu['nats-server'] / operations, postgres: cpu.postgres / operations });
    const service: Record<Operation, { cost: Cost; best: number; rate: string }> = {
      'shop get': { cost: per(shopGet.cpu!, shopGet.requests), best: Math.min(...shopGet.turnCpuPerRequest), rate: `${shopGet.requestsPerSecond.toFixed(0)} req/s` },
      'checkout info': { cost: per(info.cpu!, info.requests), best: Math.min(...info.turnCpuPerRequest), rate: `${info.requestsPerSecond.toFixed(0)} req/s` },
      'full flow': { cost: per(flow.cpu!, flow.flows), best: Math.min(...flow.turnCpuPerFlow), rate: `${flow.flowsPerSecond.toFixed(0)} flows/s` },
      'full flow signed': { cost: per(signedFlow.cpu!, signedFlow.flows), best: Math.min(...signedFlow.turnCpuPerFlow), rate: `${signedFlow.flowsPerSecond.toFixed(0)} flows/s` },
    };

    // The bare routes, each set in a process of its own (only its CPU counts: the HTTP server's part).
    const http = {} as Record<Operation, { cost: Cost; rate: string }>;
    for (const operation of ['shop get', 'checkout info'] as const) {
      const bare = await bench.bareRoutes(bareRoutes[operation]);
      const target = operation === 'shop get'
        ? { url: `${bare.url}${shopPath}` }
        : { url: `${bare.url}/${project}/checkout/info`, method: 'POST' as const, headers: { 'content-type': 'application/json' }, body: infoBody };
      const [r] = (await loadInTurns([{ ...target, connections: Connections, cpu: processesCpu([bare.pid]) }], ServiceTurns)) as [LoadResult];
      http[operation] = { cost: { ...NoCost, client: Math.min(...r.turnCpuPerRequest) }, rate: `${r.requestsPerSecond.toFixed(0)} req/s` };
    }
    const bareFlow = {} as Record<'full flow' | 'full flow signed', FlowResult>;
    for (const operation of ['full flow', 'full flow signed'] as const) {
      const bare = await bench.bareRoutes(bareRoutes[operation]);
      const [r] = (await runFlowsInTurns(bare.url, [flows[operation] as FlowDefinition<unknown>], { concurrency: FlowConcurrency, durationSeconds: duration / 2, turns: ServiceTurns, cpu: processesCpu([bare.pid]) })) as [FlowResult];
      bareFlow[operation] = r;
      http[operation] = { cost: { ...NoCost, client: Math.min(...r.turnCpuPerFlow) }, rate: `${r.flowsPerSecond.toFixed(0)} flows/s` };
    }

    // The raw parts below HTTP, with the service stopped (its database and nats-server kept).
    await bench.stopService();
    const partSeconds = Math.max(1, duration / 6);
    const parts = {} as Record<Operation, PartFigures>;
    for (const operation of Object.keys(Goals) as Operation[]) {
      const a = anatomy[operation];
      const concurrency = operation.startsWith('full flow') ? FlowConcurrency : Connections;
      const run = { concurrency, seconds: partSeconds };
      const natsPlain = { url: bench.nats.url, creds: bench.nats.creds };
      parts[operation] = {
        http: http[operation].cost,
        nats: a.roundTrips.length ? await measurePart(dir, { kind: 'nats', ...natsPlain, roundTrips: a.roundTrips }, run, natsServerCpu(bench)) : NoCost,
        // As the admin: the service's users may publish only the platform's subjects, and the part's stream must not overlap EVENTS or JOBS.
        jetstream: a.publishes.length ? await measurePart(dir, { kind: 'jetstream', url: bench.nats.url, creds: bench.nats.adminCreds, publishes: a.publishes, consume: a.jobsConsumed }, run, natsServerCpu(bench)) : NoCost,
        postgres: a.statements.length
          ? await measurePart(dir, { kind: 'postgres', url: bench.databaseUrl, pools: ServicePools, statements: a.statements, freshIds: operation in freshIds ? freshIds[operation as keyof typeof freshIds] : [] }, run, postgresCpu(bench))
          : NoCost,
        sign: a.signatures ? await measurePart(dir, { kind: 'sign', signatures: a.signatures, messageBytes: 256 }, run, processesCpu([])) : NoCost,
      };
    }
    const tls = await natsOverTls(dir, anatomy['shop get'].roundTrips);
    // BENCH_FLOOR_SHOW=true: what each operation was taken apart into (its statements and publishes).
    const shown = process.env.BENCH_FLOOR_SHOW === 'true' ? (Object.keys(Goals) as Operation[]).flatMap((operation) => showAnatomy(operation, anatomy[operation])) : [];

    const lines = [`floor: each operation's CPU (service, its nats-server and Postgres) over the sum of its raw parts, ${Connections} connections (flows ${FlowConcurrency} at a time)`];
    for (const operation of Object.keys(Goals) as Operation[]) {
      const p = parts[operation];
      const floor = sum([p.http, p.nats, p.jetstream, p.postgres, p.sign]);
      const spent = service[operation].cost;
      const ratio = service[operation].best / total(floor);
      const a = anatomy[operation];
      const unit = operation.startsWith('full flow') ? 'flow' : 'request';
      lines.push(
        `floor ${operation}: ${ratio.toFixed(2)}   goal ≤ ${Goals[operation]}: ${ratio <= Goals[operation] ? 'met' : 'NOT met'}`,
        `  service ${ms(service[operation].best)} per ${unit} in its best turn; over all turns ${ms(total(spent))} (${service[operation].rate}): ${split(spent, 'node')}`,
        `  floor   ${ms(total(floor))}: ${split(floor, 'clients')}; above it ${ms(service[operation].best - total(floor))}`,
        `  parts: HTTP ${ms(total(p.http))} (${a.httpRequests} requests, bare routes at ${http[operation].rate})` +
          `, NATS ${ms(total(p.nats))} (${a.roundTrips.length} round trips, ${bytes(a.roundTrips.reduce((n, r) => n + r.request + r.reply, 0))})` +
          `, JetStream ${ms(total(p.jetstream))} (${a.publishes.length} publishes, ${a.jobsConsumed} jobs taken)` +
          `, Postgres ${ms(total(p.postgres))} (${a.statements.length} statements)` +
          (a.signatures ? `, signer ${ms(total(p.sign))} (${a.signatures} signatures)` : ''),
      );
    }
    const ratio = flow.flowsPerSecond / bareFlow['full flow'].flowsPerSecond;
    lines.push(
      `  a NATS round trip of shop get's sizes between plain clients: ${ms(total(parts['shop get'].nats))} (TLS off), ${ms(total(tls))} (TLS on)`,
      `  the full flow at ${(ratio * 100).toFixed(1)}% of the bare routes' flows/s (bare routes in their own process); goal ≥ 15%: ${ratio >= 0.15 ? 'met' : 'NOT met'}`,
    );
    return [...lines, ...shown];
  } finally {
    await sql.end();
    await tap.close();
    await bench.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * What a part cost per operation, by where it was spent: its own process (the client side, or the
 * bare HTTP server), the nats-server, Postgres.
 */
interface Cost {
  client: number;
  nats: number;
  postgres: number;
}

const NoCost: Cost = { client: 0, nats: 0, postgres: 0 };
const total = (c: Cost) => c.client + c.nats + c.postgres;
const sum = (costs: readonly Cost[]): Cost => costs.reduce((a, c) => ({ client: a.client + c.client, nats: a.nats + c.nats, postgres: a.postgres + c.postgres }), NoCost);

interface PartFigures {
  http: Cost;
  nats: Cost;
  jetstream: Cost;
  postgres: Cost;
  sign: Cost;
}

/** The pools of the service (service/start.ts) at their default sizes: the general one and the checkouts'. */
const ServicePools: Record<string, { max: number; settings?: Record<string, string> }> = {
  'checkout-platform': { max: 10 },
  'checkout-platform-checkout': { max: 2, settings: { plan_cache_mode: 'force_generic_plan' } },
};

function anatomyOf(capture: Capture, httpRequests: number, signatures: number): Anatomy {
  const requests = capture.messages.filter((m) => m.subject.startsWith('svc.') && !m.subject.startsWith('svc.system.') && m.reply);
  const replySize = new Map(capture.messages.map((m) => [m.subject, m.size]));
  return {
    httpRequests,
    roundTrips: requests.map((m) => ({ request: m.size, reply: replySize.get(m.reply!) ?? 0 })),
    // Stream publishes await an ack on an inbox; a job handed to a consumer carries its ack subject as the reply.
    publishes: capture.messages.filter((m) => /^(events|jobs)\./.test(m.subject) && m.reply?.startsWith('_INBOX.')).map((m) => ({ size: m.size + m.headerSize })),
    jobsConsumed: capture.messages.filter((m) => m.reply?.startsWith('$JS.ACK.JOBS.')).length,
    statements: capture.statements.filter((s) => !BackgroundStatement.test(s.statement)),
    signatures,
  };
}

async function runFlowOnce(flow: FlowDefinition<{ id?: string }>, send: Send): Promise<void> {
  const context = flow.start();
  for (const step of flow.steps) await step.run(send, context);
}

/** The bare routes answering what the service answered: a route per method and path pattern, its bodies in order. */
function routesOf(answers: ReadonlyArray<{ method: string; path: string; status: number; body: string }>): BareRoute[] {
  const routes = new Map<string, BareRoute>();
  for (const { method, path: requestPath, status, body } of answers) {
    const route = requestPath.replace(/^\/[^/]+/, '/:project').replace(/\/(id|orders|shops)\/[^/]+$/, '/$1/:id');
    const key = `${method} ${route}`;
    const known = routes.get(key);
    if (known) (known.bodies as string[]).push(body);
    else routes.set(key, { method, route, status, bodies: [body] });
  }
  return [...routes.values()];
}

/** The checkout process id a captured flow made (its create's answer), to be made fresh in each replay. */
function processIds(routes: readonly BareRoute[]): string[] {
  const created = routes.find((r) => r.route.endsWith('/checkout/process'));
  return created ? [(JSON.parse(created.bodies[0]!) as { id: string }).id] : [];
}

async function signaturesMade(sql: postgres.Sql): Promise<number> {
  const [row] = await sql<{ n: number }[]>`select coalesce(sum(signature_counter), 0)::int as n from fiscal_local_tss`;
  return row?.n ?? 0;
}

/** The CPU of some processes (and nothing else), as a CpuWatch whose `service` group they are. */
function processesCpu(pids: readonly number[]): CpuWatch {
  return cpuWatch({ servicePids: pids, natsStoreDir: '/nonexistent-floor', postmasterPid: -1 });
}

function natsServerCpu(bench: Bench): CpuWatch {
  return cpuWatch({ servicePids: [], natsStoreDir: bench.nats.storeDir, postmasterPid: -1 });
}

function postgresCpu(bench: Bench): CpuWatch {
  return cpuWatch({ servicePids: [], natsStoreDir: '/nonexistent-floor', postmasterPid: bench.postmasterPid });
}

/**
 * Runs a raw part in a process of its own (floor-part.ts) and answers its CPU ms per operation:
 * the part's process and what `others` watches (its nats-server or Postgres), between `go` and `done`.
 */
async function measurePart(dir: string, spec: PartSpec, run: PartRun, others: CpuWatch): Promise<Cost> {
  const file = path.join(dir, `part-${spec.kind}-${Date.now()}.json`);
  await writeFile(file, JSON.stringify({ spec, run }));
  // BENCH_PART_FLAGS (such as `--cpu-prof --cpu-prof-dir=/tmp/prof`) looks inside a part as BENCH_NODE_FLAGS does inside the service.
  const flags = process.env.BENCH_PART_FLAGS?.split(/\s+/).filter(Boolean) ?? [];
  const child = spawn(process.execPath, [...flags, path.join(projectRoot(), 'dist/bench/floor-part.js'), file], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines: string[] = [];
  let wake: (() => void) | undefined;
  createInterface({ input: child.stdout }).on('line', (line) => {
    lines.push(line);
    wake?.();
  });
  child.once('exit', () => wake?.());
  const next = async (): Promise<string> => {
    while (!lines.length) {
      if (child.exitCode !== null) throw new Error(`the ${spec.kind} part ended early (exit ${child.exitCode})`);
      await new Promise<void>((resolve) => (wake = resolve));
    }
    return lines.shift()!;
  };
  try {
    if ((await next()) !== 'ready') throw new Error(`the ${spec.kind} part did not start`);
    // Measured PartRounds times in a row: the least it cost is the part's figure, as the service's
    // best turn is the service's (a shared machine only ever adds to what an operation costs).
    let best: Cost | undefined;
    for (let round = 0; round < PartRounds; round++) {
      const [ownBefore, othersBefore] = [await processCpuMs(child.pid!), await others.sample()];
      child.stdin.write('go\n');
      const done = await next();
      const [ownAfter, othersAfter] = [await processCpuMs(child.pid!), await others.sample()];
      const operations = Number(/^done (\d+)$/.exec(done)?.[1] ?? 0);
      if (!operations) throw new Error(`the ${spec.kind} part did nothing: ${done}`);
      const spent = emptyCpuTimes();
      addCpuSpent(spent, othersBefore, othersAfter);
      const cost = { client: (ownAfter - ownBefore) / operations, nats: spent['nats-server'] / operations, postgres: spent.postgres / operations };
      if (!best || total(cost) < total(best)) best = cost;
    }
    return best!;
  } finally {
    child.stdin.write('exit\n');
    await Promise.race([once(child, 'exit'), new Promise((resolve) => setTimeout(resolve, 5000))]);
    child.kill('SIGKILL');
  }
}

/** The same round trips through a nats-server of their own that speaks TLS only, with the platform's trust. */
async function natsOverTls(dir: string, roundTrips: Anatomy['roundTrips']): Promise<Cost> {
  const tlsDir = path.join(dir, 'tls');
  const tls = await makeTlsFiles(dir);
  const trust = await prepareSpawnedTrust(tlsDir, createKeyRing(parseKey(Buffer.alloc(32, 7).toString('base64'))), { tls });
  const storeDir = path.join(tlsDir, 'nats');
  const server = await startNatsServer({ storeDir, log: createLogger({ level: 'silent' }), configFile: trust.configFile });
  try {
    const watch = cpuWatch({ servicePids: [], natsStoreDir: storeDir, postmasterPid: -1 });
    return await measurePart(dir, { kind: 'nats', url: server.url, creds: trust.folder.creds.service, caFile: tls.caFile, roundTrips }, { concurrency: Connections, seconds: 2 }, watch);
  } finally {
    await server.stop();
  }
}

function showAnatomy(operation: Operation, a: Anatomy): string[] {
  return [
    `${operation}:`,
    ...a.roundTrips.map((r) => `  round trip: request ${bytes(r.request)}, reply ${bytes(r.reply)}`),
    ...a.publishes.map((p) => `  publish: ${bytes(p.size)}`),
    ...a.statements.map((s) => `  statement [${s.pool}]: ${s.statement.replace(/\s+/g, ' ').trim().slice(0, 140)}`),
  ];
}

/** `node 0.210 ms, nats-server 0.020 ms, postgres 0.040 ms` (`node`: the service's process, or the parts' own processes). */
function split(cost: Cost, own: string): string {
  return `${own} ${ms(cost.client)}, nats-server ${ms(cost.nats)}, postgres ${ms(cost.postgres)}`;
}

function ms(value: number): string {
  return `${value.toFixed(3)} ms`;
}

function bytes(value: number): string {
  return value >= 1024 ? `${(value / 1024).toFixed(1)} KiB` : `${value} B`;
}
