import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type postgres from 'postgres';
import { createProcessFor, finishPayment, p, type CheckoutFixture } from './checkout.js';
import type { HttpResponse } from './http.js';
import { TestProject, type TestService } from './service.js';
import { checkoutPrice } from '../../src/domain/tax.js';

/** Helpers of the closing tests: tokens, report jobs, waiting for closings and logs, orders. */

export interface ClosingTokens {
  read: string;
  write: string;
  both: string;
}

export async function closingTokens(svc: TestService): Promise<ClosingTokens> {
  return {
    read: await svc.token(['closingsRead']),
    write: await svc.token(['closingsWrite']),
    both: await svc.token(['closingsRead', 'closingsWrite']),
  };
}

/** Polls until `check` answers a value (not undefined), or throws after `timeoutMs`. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await sleep(50);
  }
}

/** POST /closings/jobs; answers the 202 response. */
export function postJob(svc: TestService, token: string, body: object): Promise<HttpResponse> {
  return svc.request('POST', `${p}/closings/jobs`, { token, body });
}

/** Posts a report job and waits until it is done or failed; answers the finished job. */
export async function runJob(svc: TestService, tokens: ClosingTokens, body: object): Promise<any> {
  const res = await postJob(svc, tokens.both, body);
  if (res.status !== 202) throw new Error(`report job refused: ${res.status} ${res.text}`);
  return eventually(`report job ${res.body.id}`, async () => {
    const job = await svc.request('GET', `${p}/closings/jobs/${res.body.id}`, { token: tokens.read });
    return job.body.state === 'pending' ? undefined : job.body;
  });
}

export function getClosing(svc: TestService, token: string, shop: string, seq: number): Promise<HttpResponse> {
  return svc.request('GET', `${p}/closings/shops/${shop}/sequenceNumbers/${seq}`, { token });
}

/** Waits until every log of a closing is present; answers the closing. */
export async function closingWithLogs(svc: TestService, token: string, shop: string, seq: number, timeoutMs = 30_000): Promise<any> {
  return eventually(
    `the logs of closing ${shop}/${seq}`,
    async () => {
      const res = await getClosing(svc, token, shop, seq);
      return res.status === 200 && res.body.logs.every((l: { state: string }) => l.state === 'present') ? res.body : undefined;
    },
    timeoutMs,
  );
}

/** Downloads a log as bytes, with its response headers. */
export async function downloadLog(svc: TestService, token: string, href: string): Promise<{ status: number; headers: Headers; bytes: Uint8Array }> {
  const response = await fetch(`${svc.url}${href}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: response.status, headers: response.headers, bytes: new Uint8Array(await response.arrayBuffer()) };
}

/** One checkout of `items` in `shop` ended as `end`; answers the process id. */
export async function checkoutIn(svc: TestService, fx: CheckoutFixture, shop: string, end: 'successful' | 'failed' | 'aborted', options: { items?: object[]; paymentMethod?: string } = {}): Promise<string> {
  const res = await createProcessFor(svc, fx, { items: options.items, extra: { shopID: shop }, paymentMethod: options.paymentMethod });
  if (res.status !== 201) throw new Error(`checkout process failed: ${res.status} ${res.text}`);
  await finishPayment(svc, fx, res.body.id, end);
  return res.body.id;
}

/** The shop's closings as the database holds them (for assertions), oldest first. */
export function storedClosings(sql: postgres.Sql, shop: string) {
  return sql<Array<{ sequence_number: string; first_order_sequence_number: string; last_order_sequence_number: string; total: string; trigger_key: string | null }>>`
    select sequence_number, first_order_sequence_number, last_order_sequence_number, total, trigger_key
    from closings where project = ${TestProject} and shop_id = ${shop} order by sequence_number`;
}

export interface SeededLine {
  type: string;
  sku: string;
  name: string;
  amount: number;
  price: number;
  taxRate: string;
  refersTo?: string | null;
  weight?: number;
  weightUnit?: string;
  scannedCode?: string;
  /** Members of the line beyond the base shape, or overriding it (totalPrice of a weighed line, couponID, priceModifiers, ...). */
  extra?: Record<string, unknown>;
}

/**
 * An order document shaped like the checkout process actor's, for orders the checkout cannot make
 * yet (promotion and coupon lines, a pricing without tax figures). Its tax figures are worked out
 * per rate from the lines as a checkout does (tax.ts checkoutPrice), unless `price` is given.
 */
export function orderDocument(options: {
  id?: string;
  shop: string;
  lines: SeededLine[];
  state?: string;
  paymentMethod?: string;
  finalizedAt?: Date;
  price?: object;
}): { id: string; doc: any } {
  const id = options.id ?? randomUUID();
  const state = options.state ?? 'final';
  const finalizedAt = (options.finalizedAt ?? new Date()).toISOString();
  const lineItems = options.lines.map((l, i) => ({
    id: `l${i + 1}`,
    sku: l.sku,
    name: l.name,
    type: l.type,
    refersTo: l.refersTo ?? null,
    amount: l.amount,
    taxRate: l.taxRate,
    price: l.price,
    totalPrice: l.price * l.amount,
    priceOrigin: 'master',
    scannedCode: l.scannedCode ?? '',
    saleRestriction: '',
    weight: l.weight ?? 0,
    weightUnit: l.weightUnit ?? '',
    referenceUnit: '',
    units: 0,
    ...l.extra,
  })) as Array<{ totalPrice: number; taxRate: string }>;
  const price = options.price ?? checkoutPrice(lineItems);
  const paid = state === 'final' ? (price as { price: number }).price : 0;
  const paymentMethod = options.paymentMethod ?? 'cash';
  return {
    id,
    doc: {
      id, project: TestProject, session: 'seeded', state, sequenceNumber: 0, startedAt: finalizedAt, finalizedAt, date: finalizedAt, createdAt: finalizedAt,
      appUserID: '', clientID: 'seeded-device', checkoutDeviceID: 'seeded-device', checkoutDevice: { type: 'app', externalID: 'seeded-device', name: '' },
      shopID: options.shop,
      shop: { name: 'Shop', externalID: '', street: '', zip: '', city: '', state: '', country: '', phone: '', email: '' },
      customer: {}, paymentMethod, paymentInformation: null, paymentResult: null, paymentState: state === 'final' ? 'successful' : 'failed',
      paidAmount: paid, lineItems, currency: 'EUR', price, links: { self: { href: `/${TestProject}/orders/${id}` } },
      payments: [{ method: paymentMethod, state: state === 'final' ? 'successful' : 'failed', information: null, result: null, currency: 'EUR', paidAmount: paid }],
    },
  };
}

/** Writes an order as the checkout process actor does: the shop's next number, in one statement. */
export async function insertOrder(sql: postgres.Sql, order: { id: string; doc: any }): Promise<number> {
  const { doc } = order;
  const [row] = await sql<{ n: string }[]>`
    with numbered as (
      insert into order_sequences (project, shop_id, last_number) values (${TestProject}, ${doc.shopID}, 1)
      on conflict (project, shop_id) do update set last_number = order_sequences.last_number + 1
      returning last_number
    )
    insert into orders (project, id, shop_id, shop_external_id, sequence_number, state, finalized_at, doc)
    select ${TestProject}, ${order.id}, ${doc.shopID}, null, last_number, ${doc.state}, ${doc.finalizedAt},
           jsonb_set(${JSON.stringify(doc)}::text::jsonb, '{sequenceNumber}', to_jsonb(last_number))::json
    from numbered
    returning sequence_number::text as n`;
  return Number(row!.n);
}
