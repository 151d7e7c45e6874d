import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Logger } from '../logger.js';
import { poolStats, type Sql } from './postgres.js';

/**
 * The process's metrics in the Prometheus text format (prom-client), one registry per running
 * service (tests run several in one process). Counters and histograms are updated where things
 * happen, labelled by what has few values (a route pattern, a subject, a job kind; never a URL or
 * an id); what a database or the broker knows is read when Prometheus scrapes (docs/operations.md, "Metrics").
 */
export interface Metrics {
  readonly registry: Registry;
  /** HTTP answers of the edge by method, route pattern and status, with their latency. */
  readonly httpRequests: Histogram<'method' | 'route' | 'status'>;
  /** Requests the edge sent on the message path by subject and outcome, with their latency. */
  readonly natsRequests: Histogram<'subject' | 'outcome'>;
  /** Messages the workers handled by subject and result: `ok`, `rejected` (4xx) or `failed` (5xx). */
  readonly workerMessages: Counter<'subject' | 'result'>;
  /** Jobs whose last attempt failed (terminated, never tried again), by kind. */
  readonly jobsExhausted: Counter<'kind'>;
  /** Webhook delivery attempts by result: `delivered` (2xx), `rejected` (another status), `timeout`, `connection_failed`. */
  readonly webhookDeliveries: Counter<'result'>;
  /** Tokens the edge issued to clients, by grant: `app` (an app user, the SDKs' sign-in), `service` (client credentials). */
  readonly tokensIssued: Counter<'grant'>;
  /** App events the app SDKs posted, by type (the SDKs' types; any other is `other`). */
  readonly appEvents: Counter<'type'>;
}

/** A request on the message path: answered, answered with an error, or not answered (timeout, no worker, broker down). */
export type NatsOutcome = 'ok' | 'error' | 'unavailable';

const Prefix = 'checkout_';

export function createMetrics(): Metrics {
  const registry = new Registry();
  // Process CPU and memory, event loop lag, heap and GC: prom-client's defaults.
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    httpRequests: new Histogram({
      name: `${Prefix}http_request_duration_seconds`,
      help: 'HTTP requests answered by the edge, by method, route pattern and status',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    natsRequests: new Histogram({
      name: `${Prefix}nats_request_duration_seconds`,
      help: 'Requests the edge sent to the workers, by subject and outcome (ok, error: an error reply, unavailable: no answer)',
      labelNames: ['subject', 'outcome'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    workerMessages: new Counter({
      name: `${Prefix}worker_messages_total`,
      help: 'Requests the workers handled, by subject and result (ok, rejected: a 4xx error, failed: a 5xx error)',
      labelNames: ['subject', 'result'] as const,
      registers: [registry],
    }),
    jobsExhausted: new Counter({
      name: `${Prefix}jobs_exhausted_total`,
      help: 'Durable jobs whose last attempt failed, by kind: nothing tries them again',
      labelNames: ['kind'] as const,
      registers: [registry],
    }),
    webhookDeliveries: new Counter({
      name: `${Prefix}webhook_deliveries_total`,
      help: 'Webhook delivery attempts, by result (delivered: 2xx, rejected: another status, timeout, connection_failed)',
      labelNames: ['result'] as const,
      registers: [registry],
    }),
    tokensIssued: new Counter({
      name: `${Prefix}tokens_issued_total`,
      help: 'Tokens issued to clients, by grant (app: an app user of the app SDKs, service: OAuth client credentials)',
      labelNames: ['grant'] as const,
      registers: [registry],
    }),
    appEvents: new Counter({
      name: `${Prefix}app_events_total`,
      help: 'App events the app SDKs posted (counted, not kept), by type',
      labelNames: ['type'] as const,
      registers: [registry],
    }),
  };
}

/** What a worker process reads at scrape time (service/start.ts passes the sources). */
export interface WorkerSources {
  /** Outbox rows not yet published, and the age of the oldest in seconds (0 when none). */
  outbox(): Promise<{ rows: number; oldestAgeSeconds: number }>;
  /** The durable job consumers: messages not yet delivered, delivered but not acked, and redelivered. */
  jobConsumers(): Promise<Array<{ kind: string; pending: number; ackPending: number; redelivered: number }>>;
  /** The age in seconds of the oldest event that waits for its webhook delivery (0 when none). */
  webhookBacklog(): Promise<number>;
  /** The connection pools of the process, by name. */
  pools: Record<string, Sql>;
  log: Logger;
}

/** How long a scrape-time read may take before its series are left out of that scrape. */
const ReadTimeoutMs = 2000;

export function registerWorkerGauges(metrics: Metrics, sources: WorkerSources): void {
  const registers = [metrics.registry];
  const outbox = sharedRead(sources.outbox, sources.log, 'outbox');
  const consumers = sharedRead(sources.jobConsumers, sources.log, 'job consumers');

  const outboxGauge = (name: string, help: string, field: 'rows' | 'oldestAgeSeconds') =>
    new Gauge({
      name: `${Prefix}${name}`,
      help,
      registers,
      async collect() {
        // NaN when the read failed: a gauge without labels cannot be left out.
        this.set((await outbox())?.[field] ?? Number.NaN);
      },
    });
  outboxGauge('outbox_rows', 'Events and jobs written to the outbox and not yet published to JetStream', 'rows');
  outboxGauge('outbox_oldest_age_seconds', 'Age of the oldest outbox row not yet published (0 when the outbox is empty)', 'oldestAgeSeconds');
  const consumerGauge = (name: string, help: string, field: 'pending' | 'ackPending' | 'redelivered') =>
    new Gauge({
      name: `${Prefix}${name}`,
      help,
      labelNames: ['kind'] as const,
      registers,
      async collect() {
        this.reset();
        for (const c of (await consumers()) ?? []) this.set({ kind: c.kind }, c[field]);
      },
    });
  consumerGauge('jobs_pending', 'Job messages in the stream not yet delivered to a worker, by kind (JetStream consumer num_pending; a bundle of jobs counts once)', 'pending');
  consumerGauge('jobs_in_progress', 'Job messages delivered to a worker and not yet acknowledged, by kind (num_ack_pending; a bundle of jobs counts once)', 'ackPending');
  consumerGauge('jobs_redelivered', 'Jobs delivered more than once and not yet acknowledged, by kind (num_redelivered)', 'redelivered');

  const webhookBacklog = sharedRead(sources.webhookBacklog, sources.log, 'webhook backlog');
  new Gauge({
    name: `${Prefix}webhook_oldest_undelivered_seconds`,
    help: 'Age of the oldest event that waits for its webhook delivery (0 when none waits): how far the receivers are behind',
    registers,
    async collect() {
      this.set((await webhookBacklog()) ?? Number.NaN);
    },
  });

  const poolGauge = (name: string, help: string, value: (s: NonNullable<ReturnType<typeof poolStats>>) => number) =>
    new Gauge({
      name: `${Prefix}${name}`,
      help,
      labelNames: ['pool'] as const,
      registers,
      collect() {
        this.reset();
        for (const [pool, sql] of Object.entries(sources.pools)) {
          const stats = poolStats(sql);
          if (stats) this.set({ pool }, value(stats));
        }
      },
    });
  poolGauge('postgres_pool_connections_in_use', 'Connections of the pool running queries or held by a transaction', (s) => s.busy + s.reserved);
  poolGauge('postgres_pool_connections_idle', 'Open connections of the pool that wait for work', (s) => s.idle);
  poolGauge('postgres_pool_connections_max', 'The most connections the pool opens', (s) => s.max);
  poolGauge('postgres_pool_queries_waiting', 'Queries waiting for a connection of the pool', (s) => s.waiting);
}

/**
 * One read shared by the gauges of one scrape (prom-client collects them all at once), with a time
 * limit: a database or broker that does not answer leaves the series out (NaN for a gauge without
 * labels), it does not hold the scrape.
 */
function sharedRead<T>(read: () => Promise<T>, log: Logger, what: string): () => Promise<T | undefined> {
  let running: Promise<T | undefined> | undefined;
  return () => {
    if (running) return running;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), ReadTimeoutMs);
    });
    const value = Promise.race([
      read().catch((err: unknown) => {
        log.warn({ err }, `metrics: reading the ${what} failed`);
        return undefined;
      }),
      timeout,
    ]).finally(() => {
      clearTimeout(timer);
      running = undefined;
    });
    running = value;
    return value;
  };
}

/** Answers a scrape: the registry's text. */
export async function scrape(metrics: Metrics): Promise<{ contentType: string; body: string }> {
  return { contentType: metrics.registry.contentType, body: await metrics.registry.metrics() };
}

export interface MetricsServer {
  url: string;
  stop(): Promise<void>;
}

/** `/metrics` on a port of its own (METRICS_PORT), for every role: not the API's port, no token. */
export async function serveMetrics(metrics: Metrics, options: { host: string; port: number; log: Logger }): Promise<MetricsServer> {
  const server: Server = createServer((request, response) => {
    if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found: GET /metrics\n');
      return;
    }
    scrape(metrics).then(
      ({ contentType, body }) => response.writeHead(200, { 'content-type': contentType }).end(body),
      (err: unknown) => {
        options.log.error({ err }, 'metrics scrape failed');
        response.writeHead(500, { 'content-type': 'text/plain' }).end('scrape failed\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}/metrics`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
