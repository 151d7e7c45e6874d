import { randomUUID } from 'node:crypto';
import { base32Decode, totpCode, totpKey, totpStep } from '../../src/auth/totp.js';
import { cpuSpentBy, formatCpu, platformCpu, type CpuTimes } from '../cpu.js';
import { comparedRate, createSender, expectStatus, runFlows, runFlowsInTurns, type FlowDefinition, type Send } from '../flows.js';
import { startBench, type Bench } from '../harness.js';
import { seedCatalog } from '../seed.js';
import { checkoutFlow, describe } from './full-flow.js';

/**
 * Issue 48's scenario: what an app user's token costs. An app signs its users in as the app SDKs
 * do (GET /{project}/tokens?role=retailerApp with Basic appID:TOTP:appUserID:secret and Client-ID:
 * the TOTP check, the hash check of the user's secret, the JWT signed at the edge), beside a
 * checkout info (the 10-item cart of `checkout-info` against 20000 products) in alternating turns
 * at one rate (flows.ts, comparedRate). Goal: a token costs at most the CPU of one checkout info
 * (ratio ≤ 1.0). Then a burst: 1000 app users starting at once, each making its app user and then
 * asking for a token, each from an address of its own (X-Forwarded-For, TRUST_PROXY, as phones
 * behind a load balancer). Goal: it finishes without an error.
 */
const Concurrency = Number(process.env.BENCH_FLOW_CONCURRENCY ?? 16);
const Turns = 4;
const Users = 200;
const Burst = Number(process.env.BENCH_TOKEN_BURST ?? 1000);
const Project = 'bench-tokens';

interface App {
  id: string;
  /** The current code, made once a second (the bench's CPU is not the platform's, but it shares the machine). */
  code(): string;
}

export async function tokensScenario(): Promise<string[]> {
  const bench = await startBench({ env: { TRUST_PROXY: 'true' } });
  try {
    await seedCatalog(bench, Project, 20_000);
    const app = await makeApp(bench);
    const { send, close } = createSender(bench.url, Concurrency);
    const users = await Promise.all(Array.from({ length: Users }, (_, i) => newAppUser(send, app, address(i))));
    close();
    const tokens = tokenFlow(app, users);
    const info: FlowDefinition<unknown> = { start: () => ({}), steps: checkoutFlow(Project, await bench.token({ project: Project, permissions: ['productsRead'] })).steps.slice(0, 1) as never };

    for (const flow of [tokens, info]) await runFlows(bench.url, flow, { concurrency: Concurrency, durationSeconds: 2, warmupSeconds: 0 });
    const saturated = await runFlows(bench.url, tokens, { concurrency: Concurrency, durationSeconds: 4, warmupSeconds: 0, cpu: bench.cpu });
    const rate = await comparedRate(bench.url, [tokens, info], Concurrency);
    const duration = Number(process.env.BENCH_DURATION ?? 10);
    const [token, checkout] = await runFlowsInTurns(bench.url, [tokens, info], { concurrency: Concurrency, durationSeconds: duration, warmupSeconds: 0, turns: Turns, cpu: bench.cpu, flowsPerSecond: rate });
    for (const [name, r] of [['tokens', token!], ['checkout infos', checkout!]] as const) if (r.failures) throw new Error(`${name}: ${r.failures} failed, the first: ${r.firstFailure}`);
    const perToken = platformCpu(token!.cpu!) / token!.flows;
    const perInfo = platformCpu(checkout!.cpu!) / checkout!.flows;
    const ratio = perToken / perInfo;

    const burst = await burstOfAppUsers(bench, app);
    return [
      `tokens: app-user tokens (TOTP check, secret hash check, JWT signed at the edge) beside a checkout info, ${Concurrency} clients at most`,
      `  at saturation: ${saturated.flowsPerSecond.toFixed(0)} tokens/s, p50 ${saturated.steps[0]!.p50.toFixed(1)} ms, p99 ${saturated.steps[0]!.p99.toFixed(1)} ms`,
      formatCpu(saturated.cpu!, saturated.flows, 'token at saturation'),
      `  at one rate (${rate}/s), ${Turns} turns each in alternating order:`,
      ...describe('  app-user token', token!),
      ...describe('  checkout info', checkout!),
      `  ratio token: ${ratio.toFixed(3)} (CPU of the platform's processes per token, ${perToken.toFixed(3)} ms, over per checkout info, ${perInfo.toFixed(3)} ms; goal ≤ 1.0: ${ratio <= 1 ? 'met' : 'NOT met'})`,
      `burst: ${Burst} app users at once, each making its app user and then asking for a token, from addresses of their own`,
      `  done in ${(burst.ms / 1000).toFixed(2)} s; per app user from its start: p50 ${burst.p50.toFixed(0)} ms, p99 ${burst.p99.toFixed(0)} ms, max ${burst.max.toFixed(0)} ms`,
      formatCpu(burst.cpu, Burst, 'app user (its creation and a token)'),
      `  errors ${burst.errors.length}${burst.errors.length ? ` (${[...new Set(burst.errors)].slice(0, 3).join('; ')})` : ''}; goal: none: ${burst.errors.length === 0 ? 'met' : 'NOT met'}`,
    ];
  } finally {
    await bench.close();
  }
}

async function makeApp(bench: Bench): Promise<App> {
  const owner = await bench.token({ project: Project, permissions: ['projectsWrite'] });
  const res = await fetch(`${bench.url}/${Project}/clients`, {
    method: 'POST',
    headers: { authorization: `Bearer ${owner}`, 'content-type': 'application/json' },
    body: JSON.stringify({ kind: 'app', name: 'Bench app' }),
  });
  const made = (await res.json()) as { id: string; secret: string };
  if (res.status !== 201) throw new Error(`app client: ${res.status} ${JSON.stringify(made)}`);
  const key = totpKey(base32Decode(made.secret));
  let step = -1;
  let code = '';
  return {
    id: made.id,
    code() {
      const now = totpStep(Date.now());
      if (now !== step) [step, code] = [now, totpCode(key, now)];
      return code;
    },
  };
}

const basic = (...parts: string[]) => `Basic ${Buffer.from(parts.join(':')).toString('base64')}`;

/** A made-up address of a phone (TEST-NET and private ranges never route here anyway). */
function address(i: number): string {
  return `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
}

async function newAppUser(send: Send, app: App, from: string): Promise<{ id: string; secret: string; clientId: string }> {
  const clientId = randomUUID().replace(/-/g, '');
  const res = expectStatus(
    await send('POST', `/apps/${app.id}/users?project=${Project}`, '', { authorization: basic(app.id, app.code()), 'client-id': clientId, 'x-forwarded-for': from }),
    201,
    'app user',
  );
  return { ...(JSON.parse(res.body) as { appUser: { id: string; secret: string } }).appUser, clientId };
}

function tokenFlow(app: App, users: Array<{ id: string; secret: string; clientId: string }>): FlowDefinition<unknown> {
  let next = 0;
  return {
    start: () => ({}),
    steps: [
      {
        name: 'token',
        async run(send) {
          const user = users[next++ % users.length]!;
          const headers = { authorization: basic(app.id, app.code(), user.id, user.secret), 'client-id': user.clientId };
          expectStatus(await send('GET', `/${Project}/tokens?role=retailerApp`, undefined, headers), 200, 'token');
        },
      },
    ],
  };
}

/** Every phone at once: its app user, then a token; what each took, and what failed. */
async function burstOfAppUsers(bench: Bench, app: App): Promise<{ ms: number; p50: number; p99: number; max: number; errors: string[]; cpu: CpuTimes }> {
  const { send, close } = createSender(bench.url, Burst);
  const errors: string[] = [];
  const times: number[] = [];
  const started = performance.now();
  const { spent } = await cpuSpentBy(bench.cpu, () =>
    Promise.all(
      Array.from({ length: Burst }, async (_, i) => {
        const from = address(100_000 + i);
        const t0 = performance.now();
        try {
          const user = await newAppUser(send, app, from);
          const headers = { authorization: basic(app.id, app.code(), user.id, user.secret), 'client-id': user.clientId, 'x-forwarded-for': from };
          expectStatus(await send('GET', `/${Project}/tokens?role=retailerApp`, undefined, headers), 200, 'token');
        } catch (err) {
          errors.push(err instanceof Error ? err.message.slice(0, 200) : String(err));
        }
        times.push(performance.now() - t0);
      }),
    ),
  );
  const ms = performance.now() - started;
  close();
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? Number.NaN;
  return { ms, p50: at(0.5), p99: at(0.99), max: times.at(-1) ?? Number.NaN, errors, cpu: spent };
}
