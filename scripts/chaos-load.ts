import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The clients of scripts/chaos.ts: customers checking out at a PoS, as docs/operations.md ("What
 * clients do when a request fails") tells them to retry (the same request again: PUT with the
 * client's own process id, or POST with the same Idempotency-Key; a PoS move asked again answers as it stands), spread over the edges the way a
 * load balancer spreads them (an edge that does not answer, or is not ready, gets no new requests).
 */
export interface Edge {
  name: string;
  url: string;
  /** Serves new requests (its /health/ready, or a refused connection, says otherwise). */
  ready: boolean;
  agent: http.Agent;
}

/** A request that failed as a client sees it: a 5xx, or no answer at all. */
export interface ClientError {
  /** When the request went out (a timeout is told seconds later). */
  sentAt: number;
  at: number;
  step: string;
  edge: string;
  what: string;
}

export interface FlowRecord {
  id: string;
  /** The client saw the payment succeed. */
  paid: boolean;
  /** It finished every step. */
  finished: boolean;
  /** Answers no rule explains (a 4xx where none belongs). */
  problems: string[];
  /** Whether the process was created by POST with an Idempotency-Key (else PUT with its id). */
  byPost: boolean;
}

interface Answer {
  status: number;
  body: string;
  headers: http.IncomingHttpHeaders;
}

const RequestTimeoutMs = 20_000;
const StepDeadlineMs = 120_000;

function send(edge: Edge, method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, edge.url);
    const request = http.request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path: url.pathname + url.search,
        agent: edge.agent,
        timeout: RequestTimeoutMs,
        headers: body === undefined ? headers : { 'content-length': Buffer.byteLength(body), ...headers },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString(), headers: response.headers }));
        response.on('error', reject);
      },
    );
    request.on('timeout', () => request.destroy(new Error(`no answer within ${RequestTimeoutMs} ms`)));
    request.on('error', reject);
    request.end(body);
  });
}

/** The balancer's view: each edge's readiness, asked four times a second. */
export function watchEdges(urls: Array<{ name: string; url: string }>): { edges: Edge[]; stop(): void } {
  const edges = urls.map(({ name, url }) => ({ name, url, ready: true, agent: new http.Agent({ keepAlive: true, maxSockets: 64 }) }));
  const probe = new http.Agent({ keepAlive: false });
  let running = true;
  void (async () => {
    while (running) {
      await Promise.all(
        edges.map(async (edge) => {
          const answer = await send({ ...edge, agent: probe }, 'GET', '/health/ready').catch(() => undefined);
          // An edge of a release without /health/ready counts as ready while it answers.
          edge.ready = answer !== undefined && (answer.status === 200 || answer.status === 404);
        }),
      );
      await sleep(250);
    }
  })();
  return {
    edges,
    stop() {
      running = false;
      for (const edge of [...edges.map((e) => e.agent), probe]) edge.destroy();
    },
  };
}

export interface LoadOptions {
  edges: Edge[];
  project: string;
  /** Bearer tokens: the app's (productsRead, checkoutRead, ordersRead) and the PoS's. */
  tokens: { app: string; pos: string };
  clients: number;
  /** Whether the edges take Idempotency-Key on POST creates (then every other flow creates by POST). */
  idempotencyKeys: boolean;
  until: () => boolean;
  onError: (error: ClientError) => void;
}

export async function runLoad(options: LoadOptions): Promise<FlowRecord[]> {
  const flows: FlowRecord[] = [];
  await Promise.all(
    Array.from({ length: options.clients }, async (_, client) => {
      for (let n = 0; !options.until(); n++) flows.push(await flow(options, client, n));
    }),
  );
  return flows;
}

/** One customer: checkout info → create the process → PoS processing → PoS successful → the order. */
async function flow(options: LoadOptions, client: number, n: number): Promise<FlowRecord> {
  const { project, tokens } = options;
  const byPost = options.idempotencyKeys && (client + n) % 2 === 1;
  const record: FlowRecord = { id: `chaos-${randomUUID()}`, paid: false, finished: false, problems: [], byPost };
  const json = (token: string, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json', ...extra });
  const patch = { authorization: `Bearer ${tokens.pos}`, 'content-type': 'application/merge-patch+json' };
  const step = (name: string, method: string, path: string, body: string | undefined, headers: Record<string, string>, expected: number[]) =>
    untilAnswered(options, client, name, () => [method, path, body, headers], expected, record);

  const cart = JSON.stringify({ shopID: 's1', session: `client-${client}`, items: [{ sku: 'WATER', amount: 1 + (n % 3) }, { sku: 'COLA', amount: 1 }] });
  const info = await step('checkout info', 'POST', `/${project}/checkout/info`, cart, json(tokens.app), [200]);
  if (!info) return record;
  const create = `{"signedCheckoutInfo":${info.body},"paymentMethod":"cash"}`;
  const created = byPost
    ? await step('create (POST)', 'POST', `/${project}/checkout/process`, create, json(tokens.app, { 'idempotency-key': randomUUID() }), [201])
    : await step('create (PUT)', 'PUT', `/${project}/checkout/process/${record.id}`, create, json(tokens.app), [200, 201]);
  if (!created) return record;
  if (byPost) record.id = (JSON.parse(created.body) as { id: string }).id;
  await pause();
  if (!(await step('PoS processing', 'PATCH', `/${project}/pos/checkout/id/${record.id}`, `{"state":"processing","processedBy":"kasse-${client}"}`, patch, [200]))) return record;
  await pause();
  if (!(await step('PoS successful', 'PATCH', `/${project}/pos/checkout/id/${record.id}`, '{"state":"successful"}', patch, [200]))) return record;
  record.paid = true;
  if (!(await step('order', 'GET', `/${project}/orders/${record.id}`, undefined, { authorization: `Bearer ${tokens.app}` }, [200]))) return record;
  record.finished = true;
  await pause();
  return record;
}

const pause = () => sleep(20 + Math.random() * 60);

/**
 * Sends until an expected answer. A 5xx or no answer is a client-visible error: the request goes
 * again (to another edge when this one did not answer) after a pause. A 409 saying that the first
 * request with this Idempotency-Key still runs is waited out. Any other answer ends the flow.
 */
async function untilAnswered(
  options: LoadOptions,
  client: number,
  step: string,
  request: () => [string, string, string | undefined, Record<string, string>],
  expected: number[],
  record: FlowRecord,
): Promise<Answer | undefined> {
  const deadline = Date.now() + StepDeadlineMs;
  for (let attempt = 0; ; attempt++) {
    const edge = pick(options.edges, client);
    const [method, path, body, headers] = request();
    const sentAt = Date.now();
    let what: string;
    try {
      const answer = await send(edge, method, path, body, headers);
      if (expected.includes(answer.status)) return answer;
      if (answer.status === 409 && answer.body.includes('idempotency_key_in_progress')) {
        await sleep(200);
        continue;
      }
      if (answer.status < 500) {
        record.problems.push(`${step}: ${answer.status} ${answer.body.slice(0, 300)}`);
        return undefined;
      }
      what = `${answer.status} ${answer.body.slice(0, 120)}`;
    } catch (err) {
      // No answer: the balancer takes the edge out until it is ready again.
      edge.ready = false;
      what = err instanceof Error ? err.message : String(err);
    }
    options.onError({ sentAt, at: Date.now(), step, edge: edge.name, what });
    if (Date.now() > deadline) {
      record.problems.push(`${step}: no answer for ${StepDeadlineMs / 1000} s (last: ${what})`);
      return undefined;
    }
    await sleep(Math.min(100 * 2 ** attempt, 1000) * (0.5 + Math.random()));
  }
}

/** A closing of shop s1 every `everyMs` (report jobs: each takes the orders since the last one), as a back office asks for it. */
export async function runClosings(options: LoadOptions & { token: string; everyMs: number }): Promise<number> {
  let made = 0;
  const record: FlowRecord = { id: 'closings', paid: false, finished: false, problems: [], byPost: true };
  while (!options.until()) {
    await sleep(options.everyMs);
    const headers: Record<string, string> = { authorization: `Bearer ${options.token}`, 'content-type': 'application/json' };
    if (options.idempotencyKeys) headers['idempotency-key'] = randomUUID();
    const body = JSON.stringify({ shopID: 's1', deviceID: 'chaos', skippedCashCount: true });
    if (await untilAnswered(options, made, 'closing job', () => ['POST', `/${options.project}/closings/jobs`, body, headers], [202], record)) made++;
  }
  if (record.problems.length > 0) throw new Error(`closing jobs: ${record.problems.join('; ')}`);
  return made;
}

/** The client's own edge while it is ready, else another ready one, else its own. */
function pick(edges: Edge[], client: number): Edge {
  const home = edges[client % edges.length]!;
  if (home.ready) return home;
  return edges.find((e) => e.ready) ?? home;
}
