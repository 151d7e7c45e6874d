import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { addCpuSpent, emptyCpuTimes, platformCpu, type CpuTimes, type CpuWatch } from './cpu.js';

/**
 * A closed-loop driver for multi-step flows, which autocannon cannot chain: `concurrency` virtual
 * clients each run the flow again and again for the duration, timing every step. Requests go over
 * keep-alive sockets with node:http (fetch costs several times its CPU, and this process shares
 * the machine with the service).
 */
export interface StepResponse {
  status: number;
  body: string;
}

export type Send = (method: string, path: string, body?: string, headers?: Record<string, string>) => Promise<StepResponse>;

export interface FlowStep<C> {
  name: string;
  /** Runs the step; throws when the answer is not the expected one. */
  run(send: Send, context: C): Promise<void>;
}

export interface FlowDefinition<C> {
  start(): C;
  /** True once the flow has nothing left to do (a scenario that ran out of fresh orders): its clients stop, and its time ends there. */
  exhausted?(): boolean;
  steps: readonly FlowStep<C>[];
}

export interface StepFigures {
  name: string;
  p50: number;
  p99: number;
}

export interface FlowResult {
  flowsPerSecond: number;
  flows: number;
  failures: number;
  firstFailure?: string;
  steps: StepFigures[];
  /** CPU time spent in the measured turns, when the run was given a CpuWatch. */
  cpu?: CpuTimes;
  /** Flows/s of each measured turn, in the order they ran (how much the machine drifted). */
  turnFlowsPerSecond: number[];
  /** CPU ms per flow of each measured turn, all processes but the bench's (how much the cost drifted), when measured. */
  turnCpuPerFlow: number[];
}

export function createSender(baseUrl: string, sockets: number): { send: Send; close(): void } {
  const agent = new http.Agent({ keepAlive: true, maxSockets: sockets });
  const base = new URL(baseUrl);
  const send: Send = (method, path, body, headers = {}) =>
    new Promise((resolve, reject) => {
      const request = http.request(
        { host: base.hostname, port: base.port, method, path, agent, headers: body === undefined ? headers : { 'content-length': Buffer.byteLength(body), ...headers } },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
          response.on('error', reject);
        },
      );
      request.on('error', reject);
      request.end(body);
    });
  return { send, close: () => agent.destroy() };
}

export interface FlowOptions {
  concurrency: number;
  durationSeconds: number;
  warmupSeconds?: number;
  /** Measure the CPU time of the measured turns (not the warm-up). */
  cpu?: CpuWatch;
  /**
   * Start flows at this rate at most (evenly spaced, `concurrency` at a time at most) instead of as
   * fast as the clients can: flows compared at one rate cost what they cost, where flows at their
   * own saturation also carry what the slower one loses in batching on a busy machine.
   */
  flowsPerSecond?: number;
}

export async function runFlows<C>(baseUrl: string, flow: FlowDefinition<C>, options: FlowOptions & { between?: () => Promise<void> }): Promise<FlowResult> {
  const [result] = await runFlowsInTurns(baseUrl, [flow], { ...options, turns: 1 });
  return result!;
}

/**
 * Flows compared with each other, measured in turns (`turns` each, of durationSeconds / turns),
 * every other round in reverse (A B C, C B A, A B C, ...): with an even number of turns, a drift of
 * the shared machine over the run (tables that grow, a neighbour's load) weighs on each flow alike,
 * where A B A B would always give B the later, slower half. Between two
 * turns, `between()` lets the work a turn left behind settle (so that it does not load the next);
 * the CPU a turn costs is read after it, so the background work the flows caused (receipts made
 * ahead, fulfillment calls) counts as theirs.
 */
export async function runFlowsInTurns(
  baseUrl: string,
  flows: readonly FlowDefinition<unknown>[],
  options: FlowOptions & { turns: number; between?: () => Promise<void> },
): Promise<FlowResult[]> {
  return runFlowsAcross(
    flows.map((flow) => ({ url: baseUrl, flow, cpu: options.cpu, between: options.between })),
    options,
  );
}

/** A flow against a service of its own: where it runs, how its CPU is read, what settles after its turn. */
export interface FlowTarget {
  url: string;
  flow: FlowDefinition<unknown>;
  cpu?: CpuWatch;
  between?: () => Promise<void>;
}

/** runFlowsInTurns with each flow against its own service (the same flow on services set up differently, say). */
export async function runFlowsAcross(targets: readonly FlowTarget[], options: Omit<FlowOptions, 'cpu'> & { turns: number }): Promise<FlowResult[]> {
  const senders = targets.map((target) => createSender(target.url, options.concurrency));
  try {
    const tallies = targets.map((target) => newTally(target.flow));
    const cpu = targets.map(() => emptyCpuTimes());
    const pace = { concurrency: options.concurrency, flowsPerSecond: options.flowsPerSecond };
    for (const [index, target] of targets.entries()) await drive(senders[index]!.send, target.flow, pace, options.warmupSeconds ?? 2, newTally(target.flow));
    for (const target of targets) await target.between?.();
    const turnRates = targets.map((): number[] => []);
    const turnCpu = targets.map((): number[] => []);
    for (let turn = 0; turn < options.turns; turn++) {
      const order = turn % 2 === 0 ? [...targets.keys()] : [...targets.keys()].reverse();
      for (const index of order) {
        const target = targets[index]!;
        const tally = tallies[index]!;
        const [flowsBefore, secondsBefore] = [tally.flows, tally.seconds];
        const before = await target.cpu?.sample();
        await drive(senders[index]!.send, target.flow, pace, options.durationSeconds / options.turns, tally);
        turnRates[index]!.push((tally.flows - flowsBefore) / (tally.seconds - secondsBefore));
        await target.between?.();
        if (target.cpu && before) {
          const spent = emptyCpuTimes();
          addCpuSpent(spent, before, await target.cpu.sample());
          addCpuSpent(cpu[index]!, emptyCpuTimes(), spent);
          turnCpu[index]!.push(platformCpu(spent) / Math.max(1, tally.flows - flowsBefore));
        }
      }
    }
    return tallies.map((tally, index) => ({
      flowsPerSecond: tally.flows / tally.seconds,
      flows: tally.flows,
      failures: tally.failures,
      firstFailure: tally.firstFailure,
      steps: targets[index]!.flow.steps.map((step, i) => ({ name: step.name, p50: percentile(tally.timings[i]!, 0.5), p99: percentile(tally.timings[i]!, 0.99) })),
      ...(targets[index]!.cpu ? { cpu: cpu[index]! } : {}),
      turnFlowsPerSecond: turnRates[index]!,
      turnCpuPerFlow: turnCpu[index]!,
    }));
  } finally {
    for (const sender of senders) sender.close();
  }
}

interface Tally {
  timings: number[][];
  flows: number;
  failures: number;
  firstFailure?: string;
  seconds: number;
}

function newTally(flow: FlowDefinition<unknown>): Tally {
  return { timings: flow.steps.map(() => []), flows: 0, failures: 0, seconds: 0 };
}

async function drive<C>(send: Send, flow: FlowDefinition<C>, pace: Pick<FlowOptions, 'concurrency' | 'flowsPerSecond'>, seconds: number, tally: Tally): Promise<void> {
  const started = performance.now();
  const until = started + seconds * 1000;
  // Paced: each flow takes the next start time; a client that is late starts at once.
  const gap = pace.flowsPerSecond ? 1000 / pace.flowsPerSecond : 0;
  let nextStart = started;
  const client = async () => {
    while (performance.now() < until && !flow.exhausted?.()) {
      if (gap) {
        const at = nextStart;
        nextStart += gap;
        const wait = at - performance.now();
        if (wait > 0) await sleep(wait);
        if (performance.now() >= until) break;
      }
      const context = flow.start();
      try {
        for (const [index, step] of flow.steps.entries()) {
          const t0 = performance.now();
          await step.run(send, context);
          tally.timings[index]!.push(performance.now() - t0);
        }
        tally.flows++;
      } catch (err) {
        tally.failures++;
        tally.firstFailure ??= err instanceof Error ? err.message : String(err);
      }
    }
  };
  await Promise.all(Array.from({ length: pace.concurrency }, client));
  tally.seconds += (performance.now() - started) / 1000;
}

function percentile(values: number[], q: number): number {
  if (!values.length) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

/** Throws unless the response has the status. */
export function expectStatus(response: StepResponse, status: number, step: string): StepResponse {
  if (response.status !== status) throw new Error(`${step} answered ${response.status}: ${response.body.slice(0, 300)}`);
  return response;
}

/**
 * The rate flows compared with each other run at: a share (BENCH_RATE_SHARE, 0.9 by default) of
 * the flows/s the slowest of them makes at its saturation, read in a pass of `seconds` each after
 * the warm-up. Flows compared each at its own saturation differ in more than their work: on a busy
 * 2-core machine the slower one runs fewer operations a second, so each shares fewer wake-ups,
 * commits and socket reads with others, and its CPU per operation also holds what it lost in
 * batching (a full flow took 40% more CPU at 60% of its saturated rate). At one rate a ratio is
 * what the extra work costs.
 */
export async function comparedRate(baseUrl: string, flows: readonly FlowDefinition<unknown>[], concurrency: number, seconds = 2): Promise<number> {
  const share = Number(process.env.BENCH_RATE_SHARE ?? 0.9);
  let slowest = Infinity;
  for (const flow of flows) slowest = Math.min(slowest, (await runFlows(baseUrl, flow, { concurrency, durationSeconds: seconds, warmupSeconds: 0 })).flowsPerSecond);
  return Math.round(share * slowest);
}
