import { setTimeout as sleep } from 'node:timers/promises';
import { jetstream } from '@nats-io/jetstream';
import t from 'tap';
import { createMetrics } from '../src/infra/metrics.js';
import { createLogger } from '../src/logger.js';
import { startJobConsumer } from '../src/messaging/jobs.js';
import { startMoreEdge, startTestService, TestProject } from './support/service.js';

/**
 * `/metrics` in the Prometheus text format: the series docs/operations.md ("Metrics") lists appear after some
 * requests, labelled by route pattern and subject (never by URL), with what the outbox, JetStream
 * and the Postgres pools hold read at the scrape.
 */
const svc = await startTestService(t);
const writer = await svc.token(['shopsRead', 'shopsWrite']);

/** The scrape as a map from `name{labels}` to its value. */
async function scrape(url: string): Promise<{ status: number; contentType: string | null; series: Map<string, number>; text: string }> {
  const res = await fetch(url);
  const text = await res.text();
  const series = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    series.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return { status: res.status, contentType: res.headers.get('content-type'), series, text };
}

t.test('the scrape shows HTTP, message path and worker series after some requests', async (t) => {
  const created = await svc.request('POST', `/${TestProject}/shops`, { token: writer, body: { name: 'Counted' } });
  t.equal(created.status, 201);
  t.equal((await svc.request('GET', `/${TestProject}/shops/${created.body.id}`, { token: writer })).status, 200);
  t.equal((await svc.request('GET', `/${TestProject}/shops/nowhere`, { token: writer })).status, 404);
  t.equal((await svc.request('GET', '/no/such/route')).status, 404);

  t.equal(svc.service.metricsUrl, `${svc.url}/metrics`, 'without METRICS_PORT, on the edge port');
  const { status, contentType, series, text } = await scrape(svc.service.metricsUrl!);
  t.equal(status, 200);
  t.match(contentType, /^text\/plain; version=0\.0\.4/);
  t.notOk(text.includes('nowhere') || text.includes(created.body.id), 'no URL or id is a label');

  t.equal(series.get('checkout_http_request_duration_seconds_count{method="POST",route="/:project/shops",status="201"}'), 1);
  t.equal(series.get('checkout_http_request_duration_seconds_count{method="GET",route="/:project/shops/:id",status="200"}'), 1);
  t.equal(series.get('checkout_http_request_duration_seconds_count{method="GET",route="/:project/shops/:id",status="404"}'), 1);
  t.equal(series.get('checkout_http_request_duration_seconds_count{method="GET",route="unmatched",status="404"}'), 1);
  t.ok(series.has('checkout_http_request_duration_seconds_bucket{le="0.1",method="POST",route="/:project/shops",status="201"}'), 'a latency histogram');

  t.equal(series.get('checkout_nats_request_duration_seconds_count{subject="svc.shops.create",outcome="ok"}'), 1);
  t.equal(series.get('checkout_nats_request_duration_seconds_count{subject="svc.shops.get",outcome="error"}'), 1, 'an error reply');
  t.equal(series.get('checkout_worker_messages_total{subject="svc.shops.create",result="ok"}'), 1);
  t.equal(series.get('checkout_worker_messages_total{subject="svc.shops.get",result="rejected"}'), 1, 'a 4xx is rejected, not failed');

  t.ok(Number.isFinite(series.get('checkout_outbox_rows')), 'outbox rows');
  t.ok(Number.isFinite(series.get('checkout_outbox_oldest_age_seconds')), 'age of the oldest outbox row');
  for (const kind of ['fulfillment', 'closing', 'receipt', 'fiscal']) {
    t.equal(series.get(`checkout_jobs_pending{kind="${kind}"}`), 0, `pending ${kind} jobs`);
    t.ok(series.has(`checkout_jobs_redelivered{kind="${kind}"}`), `redelivered ${kind} jobs`);
  }
  t.equal(series.get('checkout_postgres_pool_connections_max{pool="general"}'), 4, 'DATABASE_POOL_MAX');
  t.equal(series.get('checkout_postgres_pool_connections_max{pool="checkout"}'), 2);
  t.ok(series.has('checkout_postgres_pool_connections_in_use{pool="general"}'));
  t.ok(series.has('checkout_postgres_pool_queries_waiting{pool="general"}'));
  t.ok(series.get('process_cpu_seconds_total')! > 0, 'process CPU');
  t.ok(series.get('process_resident_memory_bytes')! > 0, 'process memory');
});

t.test('the outbox series name the rows waiting and how long the oldest has waited', async (t) => {
  // The relay's lock held by this transaction: the row waits while the scrape reads it.
  await svc.sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(7420002)`;
    await svc.sql`insert into outbox (subject, payload, created_at) values ('events.metrics.test', '{}', now() - interval '90 seconds')`;
    const { series } = await scrape(svc.service.metricsUrl!);
    t.ok(series.get('checkout_outbox_rows')! >= 1, 'a row waits');
    t.ok(series.get('checkout_outbox_oldest_age_seconds')! >= 90, 'for 90 seconds and more');
  });
});

t.test('a job that fails its last attempt is counted by kind', async (t) => {
  const metrics = createMetrics();
  const consumer = await startJobConsumer(
    { nc: svc.nc, log: createLogger({ level: 'silent' }), metrics },
    { durable: 'metrics-test', filter: 'jobs.metricstest.>', retryScheduleMs: [100], maxAttempts: 2 },
    async () => ({ kind: 'retry', reason: 'never works' }),
  );
  t.teardown(() => consumer.stop());
  await jetstream(svc.nc).publish('jobs.metricstest.acme.1', 'x', { msgID: 'metrics-test-1' });
  let exhausted = 0;
  for (let i = 0; i < 200 && exhausted === 0; i++) {
    exhausted = (await metrics.jobsExhausted.get()).values.find((v) => v.labels.kind === 'metricstest')?.value ?? 0;
    if (exhausted === 0) await sleep(50);
  }
  t.equal(exhausted, 1);
  t.match(await metrics.registry.metrics(), /checkout_jobs_exhausted_total\{kind="metricstest"\} 1/);
});

t.test('with METRICS_PORT, /metrics is served on that port and not on the edge', async (t) => {
  const edge = await startMoreEdge(t, svc, { METRICS_PORT: '0' });
  t.not(new URL(edge.service.metricsUrl!).port, new URL(edge.url).port);
  t.equal((await edge.request('GET', '/metrics')).status, 404, 'not on the API port');
  t.equal((await edge.request('GET', '/health/live')).status, 200);
  const { status, series } = await scrape(edge.service.metricsUrl!);
  t.equal(status, 200);
  t.equal(series.get('checkout_http_request_duration_seconds_count{method="GET",route="/health/live",status="200"}'), 1);
  t.notOk(series.has('checkout_outbox_rows'), 'an edge has no outbox to read');
});
