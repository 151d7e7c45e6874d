import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import postgres from 'postgres';
import type { ClosingSummary, ReportJob } from '../../subjects/closings.js';
import { cpuSpentBy, formatCpu } from '../cpu.js';
import { startBench, type Bench } from '../harness.js';

/**
 * Issue 11's closing scenario: one shop with 50 000 final orders (shaped like the checkout's: four
 * lines, two tax rates, a deposit; seeded with one set-based insert) closed through a report job
 * with the DSFinV-K export written, beside a raw select of the same orders in the same run. Prints
 * the closing time (job posted → done, as a client sees it), the export time (done → log present)
 * and the service's peak RSS growth meanwhile. Goal: closing ≤ 3 s, export ≤ 5 s, RSS ≤ +200 MB.
 */
const Orders = Number(process.env.BENCH_CLOSING_ORDERS ?? 50_000);
const Project = 'bench-closing';

export async function closingScenario(): Promise<string[]> {
  const bench = await startBench();
  const sql = postgres(bench.databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const token = await bench.token({ project: Project, permissions: ['closingsRead', 'closingsWrite', 'shopsWrite', 'projectsWrite'] });
    const call: Call = async <T>(method: string, path: string, body?: unknown) => {
      const res = await fetch(`${bench.url}/${Project}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
      return JSON.parse(text) as T;
    };
    await call('PUT', '/settings', {
      currency: 'EUR', taxRates: { normal: '19', reduced: '7' }, paymentMethods: ['cash', 'girocard', 'creditCardVisa'],
      companyName: 'Bench GmbH', taxNumber: '12/345/67890', vatID: 'DE123456789', companyAdress: { street: 'Benchweg 1', zip: '10115', city: 'Berlin', country: 'DE' },
    });
    for (const id of ['warm-up', 'bench-shop']) await call('POST', '/shops', { id, name: `Shop ${id}`, externalId: id.toUpperCase(), city: 'Berlin' });

    const seedStarted = performance.now();
    await seedOrders(sql, 'warm-up', 2000);
    await seedOrders(sql, 'bench-shop', Orders);
    const seedMs = performance.now() - seedStarted;
    await sql`vacuum analyze orders`;
    await sql`checkpoint`;

    // Warm-up: a closing and export of 2000 orders of another shop, so that JIT compilation is not measured.
    await closeThroughJob(bench, sql, token, call, 'warm-up');

    const selectStarted = performance.now();
    const raw = await sql<{ doc: string }[]>`
      select doc::text as doc from orders where project = ${Project} and shop_id = 'bench-shop' and state = 'final' order by sequence_number`;
    const selectMs = performance.now() - selectStarted;
    const rawBytes = raw.reduce((n, r) => n + r.doc.length, 0);
    raw.length = 0;
    await sql`checkpoint`;

    const { result: measured, spent } = await cpuSpentBy(bench.cpu, () => closeThroughJob(bench, sql, token, call, 'bench-shop'));
    const met = measured.closingMs <= 3000 && measured.exportMs <= 5000 && measured.rssGrowthMb <= 200;
    const s = (ms: number) => `${(ms / 1000).toFixed(2).padStart(6)} s`;
    return [
      `closing, ${Orders} final orders of one shop (4 lines, 2 tax rates, a deposit each; seeded in ${s(seedMs).trim()}) through a report job`,
      `  closing (job posted → done)       ${s(measured.closingMs)}   ${measured.orderCount} orders, total ${(measured.total / 100).toFixed(2)} EUR`,
      `  DSFinV-K export (done → present)  ${s(measured.exportMs)}   zip ${(measured.zipBytes / 1e6).toFixed(1)} MB; written in the worker in ${s(measured.writeMs).trim()}`,
      `  raw select of the same orders     ${s(selectMs)}   ${(rawBytes / 1e6).toFixed(0)} MB of order JSON`,
      formatCpu(spent, measured.orderCount / 1000, '1000 orders closed and exported'),
      `  service RSS growth                ${`+${measured.rssGrowthMb.toFixed(0)} MB`.padStart(8)}   peak during closing and export (${measured.rssBeforeMb.toFixed(0)} MB before)`,
      `  goal ≤ 3 s closing, ≤ 5 s export, RSS growth ≤ 200 MB: ${met ? 'met' : 'NOT met'}`,
    ];
  } finally {
    await sql.end();
    await bench.close();
  }
}

type Call = <T>(method: string, path: string, body?: unknown) => Promise<T>;

/** `token` may read closings (the log is downloaded with it); `sql` is the scenario's own pool. */
async function closeThroughJob(bench: Bench, sql: postgres.Sql, token: string, call: Call, shop: string) {
  const pid = bench.pids[0] ?? 0;
  const rssBeforeMb = rssMb(pid);
  let peak = rssBeforeMb;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 10);
  try {
    const started = performance.now();
    const job = await call<ReportJob>('POST', '/closings/jobs', { shopID: shop, deviceID: 'bench', formats: ['dsfinvk_2023_03'] });
    let done: ReportJob | undefined;
    while (!done) {
      const current = await call<ReportJob>('GET', `/closings/jobs/${job.id}`);
      if (current.state === 'failed') throw new Error(`the report job failed: ${current.reason}`);
      if (current.state === 'done') done = current;
      else await sleep(25);
    }
    const closingMs = performance.now() - started;
    let closing: ClosingSummary | undefined;
    for (;;) {
      const list = await call<{ closings: ClosingSummary[] }>('GET', `/closings?shopID=${shop}&perPage=1`);
      closing = list.closings[0];
      if (closing && closing.sequenceNumber === done.sequenceNumber && closing.logs.every((l: { state: string }) => l.state === 'present')) break;
      // Polled gently: each look is a request the service's event loop answers beside the export.
      await sleep(50);
    }
    const exportMs = performance.now() - started - closingMs;
    const log = closing.logs[0]!;
    const zip = await fetch(`${bench.url}${closing.links.dsfinvk_2023_03!.href}`, { headers: { authorization: `Bearer ${token}` } });
    const zipBytes = (await zip.arrayBuffer()).byteLength;
    const writeMs = await writtenIn(sql, Number(log.id));
    return { closingMs, exportMs, writeMs, zipBytes, rssBeforeMb, rssGrowthMb: Math.max(peak, rssMb(pid)) - rssBeforeMb, orderCount: closing.orderCount, total: closing.total };
  } finally {
    clearInterval(sampler);
  }
}

/** How long the worker took from the closing's creation to the log's completion (database clock). */
async function writtenIn(sql: postgres.Sql, logId: number): Promise<number> {
  const [row] = await sql<{ ms: number }[]>`
    select extract(epoch from (l.written_at - c.created_at)) * 1000 as ms
    from closing_logs l join closings c on c.project = l.project and c.shop_id = l.shop_id and c.sequence_number = l.closing_sequence_number
    where l.id = ${logId}`;
  return Number(row?.ms ?? 0);
}

function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match?.[1] ?? 0) / 1024;
}

/**
 * Orders as the checkout process actor writes them, set-based: 2 × n ordinary lines at 19 % and
 * 7 %, a bottle at 19 % with its deposit line, per-rate tax figures rounded half away from zero;
 * paid by cash, girocard or credit card in turn, one per second.
 */
export async function seedOrders(sql: postgres.Sql, shop: string, count: number): Promise<void> {
  await sql`
    with o as (
      select n, gen_random_uuid()::text as id, timestamptz '2026-11-21 08:00:00+01' + n * interval '1 second' as at,
             1 + n % 3 as water, 1 + n % 2 as bread,
             (array['cash', 'girocard', 'creditCardVisa'])[1 + n % 3] as method
      from generate_series(1, ${count}::int) n
    ), priced as (
      select *, 99 * water + 129 + 25 as pre19, 249 * bread as pre7 from o
    ), taxed as (
      select *, round(pre19 * 19 / 119.0)::int as tax19, round(pre7 * 7 / 107.0)::int as tax7 from priced
    )
    insert into orders (project, id, shop_id, shop_external_id, sequence_number, state, finalized_at, doc)
    select ${Project}::text, id, ${shop}::text, ${shop.toUpperCase()}::text, n, 'final', at, json_build_object(
      'id', id, 'project', ${Project}::text, 'session', 'bench', 'state', 'final', 'sequenceNumber', n,
      'startedAt', to_json(at - interval '2 minutes'), 'finalizedAt', to_json(at), 'date', to_json(at), 'createdAt', to_json(at),
      'appUserID', '', 'clientID', 'phone-' || (n % 500), 'checkoutDeviceID', 'phone-' || (n % 500),
      'checkoutDevice', json_build_object('type', 'app', 'externalID', 'phone-' || (n % 500), 'name', ''),
      'shopID', ${shop}::text,
      'shop', json_build_object('name', 'Shop ' || ${shop}::text, 'externalID', ${shop.toUpperCase()}::text, 'street', 'Torstraße 1', 'zip', '10115', 'city', 'Berlin', 'state', '', 'country', 'DE', 'phone', '', 'email', ''),
      'customer', json_build_object(), 'paymentMethod', method, 'paymentInformation', null, 'paymentResult', null, 'paymentState', 'successful',
      'paidAmount', pre19 + pre7,
      'lineItems', json_build_array(
        json_build_object('id', 'l1', 'sku', 'WATER', 'name', 'Mineralwasser 1,5 l', 'type', 'default', 'refersTo', null, 'amount', water, 'taxRate', '19', 'price', 99, 'totalPrice', 99 * water, 'priceOrigin', 'master', 'scannedCode', '4000000000017', 'saleRestriction', '', 'weight', 0, 'weightUnit', '', 'referenceUnit', '', 'units', 0),
        json_build_object('id', 'l2', 'sku', 'BREAD', 'name', 'Bauernbrot 750 g', 'type', 'default', 'refersTo', null, 'amount', bread, 'taxRate', '7', 'price', 249, 'totalPrice', 249 * bread, 'priceOrigin', 'master', 'scannedCode', '4000000000024', 'saleRestriction', '', 'weight', 0, 'weightUnit', '', 'referenceUnit', '', 'units', 0),
        json_build_object('id', 'l3', 'sku', 'COLA', 'name', 'Cola 0,5 l', 'type', 'default', 'refersTo', null, 'amount', 1, 'taxRate', '19', 'price', 129, 'totalPrice', 129, 'priceOrigin', 'master', 'scannedCode', '4000000000031', 'saleRestriction', '', 'weight', 0, 'weightUnit', '', 'referenceUnit', '', 'units', 0),
        json_build_object('id', 'l4', 'sku', 'DEPOSIT-025', 'name', 'Pfand 0,25', 'type', 'deposit', 'refersTo', 'l3', 'amount', 1, 'taxRate', '19', 'price', 25, 'totalPrice', 25, 'priceOrigin', 'master', 'scannedCode', '', 'saleRestriction', '', 'weight', 0, 'weightUnit', '', 'referenceUnit', '', 'units', 0)
      ),
      'currency', 'EUR',
      'price', json_build_object(
        'tax', json_build_object('19', tax19, '7', tax7), 'taxNet', json_build_object('19', pre19 - tax19, '7', pre7 - tax7),
        'taxPre', json_build_object('19', pre19, '7', pre7), 'netPrice', pre19 + pre7 - tax19 - tax7, 'price', pre19 + pre7),
      'links', json_build_object('self', json_build_object('href', '/' || ${Project}::text || '/orders/' || id)),
      'payments', json_build_array(json_build_object('method', method, 'state', 'successful', 'information', null, 'result', null, 'currency', 'EUR', 'paidAmount', pre19 + pre7))
    )
    from taxed`;
  await sql`insert into order_sequences (project, shop_id, last_number) values (${Project}::text, ${shop}::text, ${count})`;
}
