import { setTimeout as sleep } from 'node:timers/promises';
import { jetstream } from '@nats-io/jetstream';
import type { MsgHdrs } from '@nats-io/transport-node';
import type { Test } from 'tap';
import { EventStream } from '../../subjects/events.js';
import type { TestService } from './service.js';
import { TestProject } from './service.js';

/**
 * A small shop for the checkout process tests: settings, one shop, a few priced products (one
 * age-restricted, one with forceControl), and helpers for the steps of a checkout.
 */
export const p = `/${TestProject}`;

export interface CheckoutFixture {
  /** A signed checkout info for a cart of `items` (default: 2 × WATER) in shop s1. */
  signedInfo(items?: object[], extra?: object): Promise<any>;
  /** POST /checkout/process with a fresh checkout info (`info`: its further fields, such as clientID); answers the response. */
  createProcess(options?: { items?: object[]; paymentMethod?: string; info?: object }): Promise<any>;
  tokens: Record<'customer' | 'reader' | 'payment' | 'pricing' | 'supervisor' | 'orders', string>;
  /** GET /checkout/process/{id} with checkoutRead; answers the response. */
  getProcess(id: string): Promise<any>;
  /** PATCH /checkout/process/{id} with `body`, by default with a token that holds all three PATCH permissions. */
  patchProcess(id: string, body: object, token?: string): Promise<any>;
  /**
   * A new process (created as createProcess does) moved into `state` through the PATCH shapes
   * (`aborted`: the abort request from pending); answers its body and fails on any refusal.
   */
  processIn(state: ProcessStage, options?: { items?: object[]; paymentMethod?: string }): Promise<any>;
}

/** Where processIn leaves a process: a payment state, or aborted. */
export type ProcessStage = 'pending' | 'processing' | 'successful' | 'failed' | 'transferred' | 'aborted';

/** The PATCH requests that lead from pending to each stage. */
const pathTo: Record<ProcessStage, object[]> = {
  pending: [],
  processing: [{ paymentState: 'processing' }],
  successful: [{ paymentState: 'processing' }, { paymentState: 'successful' }],
  failed: [{ paymentState: 'failed' }],
  transferred: [{ paymentState: 'transferred' }],
  aborted: [{ aborted: true }],
};

export async function seedCheckout(svc: TestService): Promise<CheckoutFixture> {
  const admin = await svc.token(['productsWrite', 'pricingWrite', 'shopsWrite', 'projectsWrite']);
  const tokens = {
    customer: await svc.token(['productsRead']),
    reader: await svc.token(['checkoutRead']),
    payment: await svc.token(['setPaymentState']),
    pricing: await svc.token(['updatePricingCheckoutProcess']),
    supervisor: await svc.token(['supervisor']),
    orders: await svc.token(['ordersRead']),
  };
  const mover = await svc.token(['productsRead', 'setPaymentState', 'updatePricingCheckoutProcess']);
  await svc.request('PUT', `${p}/settings`, { token: admin, body: { currency: 'EUR', taxRates: { normal: '19', reduced: '7' }, paymentMethods: ['cash', 'girocard'] } });
  await svc.request('POST', `${p}/shops`, { token: admin, body: { id: 's1', name: 'Shop 1', externalId: 'E-1', city: 'Berlin', street: 'Torstraße 1' } });
  await svc.request('POST', `${p}/shops`, { token: admin, body: { id: 's2', name: 'Shop 2', externalId: 'E-2' } });
  const products = [
    { sku: 'WATER', name: 'Wasser', taxCategory: 'normal' },
    { sku: 'BREAD', name: 'Brot', taxCategory: 'reduced' },
    { sku: 'WINE', name: 'Rotwein', taxCategory: 'normal', saleRestriction: 'min_age_18' },
    { sku: 'RAZOR', name: 'Rasierklingen', taxCategory: 'normal', forceControl: true },
  ];
  const prices = [
    { sku: 'WATER', category: 'default', prices: [{ price: '0.99', currency: 'EUR', tier: 'list' }] },
    { sku: 'BREAD', category: 'default', prices: [{ price: '2.49', currency: 'EUR', tier: 'list' }] },
    { sku: 'WINE', category: 'default', prices: [{ price: '5.99', currency: 'EUR', tier: 'list' }] },
    { sku: 'RAZOR', category: 'default', prices: [{ price: '12.99', currency: 'EUR', tier: 'list' }] },
  ];
  const ndjson = (items: object[]) => ({ raw: items.map((i) => JSON.stringify(i)).join('\n'), headers: { 'content-type': 'application/x-ndjson' } });
  await svc.request('POST', `${p}/products/_batch`, { token: admin, ...ndjson(products) });
  await svc.request('POST', `${p}/pricing/v2/category/batch`, { token: admin, ...ndjson(prices) });

  const signedInfo = async (items: object[] = [{ sku: 'WATER', amount: 2 }], extra: object = {}) => {
    const res = await svc.request('POST', `${p}/checkout/info`, { token: tokens.customer, body: { shopID: 's1', session: 'sess', clientID: 'phone', appUserID: 'user', items, ...extra } });
    if (res.status !== 200) throw new Error(`checkout info failed: ${res.status} ${res.text}`);
    return res.body;
  };
  const createProcess = async (options: { items?: object[]; paymentMethod?: string; info?: object } = {}) => {
    const signedCheckoutInfo = await signedInfo(options.items, options.info);
    return svc.request('POST', `${p}/checkout/process`, { token: tokens.customer, body: { signedCheckoutInfo, paymentMethod: options.paymentMethod ?? 'cash' } });
  };
  const getProcess = (id: string) => svc.request('GET', `${p}/checkout/process/${id}`, { token: tokens.reader });
  const patchProcess = (id: string, body: object, token = mover) => svc.request('PATCH', `${p}/checkout/process/${id}`, { token, body });
  return {
    tokens,
    signedInfo,
    createProcess,
    getProcess,
    patchProcess,
    async processIn(state, options = {}) {
      const created = await createProcess(options);
      if (created.status !== 201) throw new Error(`checkout process failed: ${created.status} ${created.text}`);
      let res = created;
      for (const body of pathTo[state]) {
        res = await patchProcess(created.body.id, body);
        if (res.status !== 200) throw new Error(`PATCH ${JSON.stringify(body)} failed: ${res.status} ${res.text}`);
      }
      return res.body;
    },
  };
}

/**
 * POST /checkout/process for a cart with further fields (`extra`: shopID, customer, ...) and, if
 * given, payment information; answers the response.
 */
export async function createProcessFor(
  svc: TestService,
  fixture: CheckoutFixture,
  options: { items?: object[]; extra?: object; paymentMethod?: string; paymentInformation?: object } = {},
): Promise<any> {
  const signedCheckoutInfo = await fixture.signedInfo(options.items, options.extra);
  const body = { signedCheckoutInfo, paymentMethod: options.paymentMethod ?? 'cash', ...(options.paymentInformation && { paymentInformation: options.paymentInformation }) };
  return svc.request('POST', `${p}/checkout/process`, { token: fixture.tokens.customer, body });
}

/** PATCH the PoS view of a process with an RFC 7386 merge patch. */
export function patchPos(svc: TestService, token: string, id: string, patch: object): Promise<any> {
  return svc.request('PATCH', `${p}/pos/checkout/id/${id}`, { token, body: patch, headers: { 'content-type': 'application/merge-patch+json' } });
}

/**
 * Ends a process the way a payment system does (PATCH paymentState processing, then `successful`
 * or `failed`, with `paymentResult` on the last move), or the customer (`aborted`); throws on a refusal.
 */
export async function finishPayment(svc: TestService, fixture: CheckoutFixture, id: string, end: 'successful' | 'failed' | 'aborted', paymentResult?: object): Promise<any> {
  const steps: Array<[string, object]> =
    end === 'aborted'
      ? [[fixture.tokens.customer, { aborted: true }]]
      : [
          [fixture.tokens.payment, { paymentState: 'processing' }],
          [fixture.tokens.payment, { paymentState: end, ...(paymentResult && { paymentResult }) }],
        ];
  let res: any;
  for (const [token, body] of steps) {
    res = await svc.request('PATCH', `${p}/checkout/process/${id}`, { token, body });
    if (res.status !== 200) throw new Error(`PATCH ${JSON.stringify(body)} failed: ${res.status} ${res.text}`);
  }
  return res.body;
}

/** An event as a listener received it: its subject's parts, its Nats-Msg-Id and its parsed payload. */
export interface DeliveredEvent {
  subject: string;
  domain: string;
  id: string;
  event: string;
  msgId: string | undefined;
  payload: any;
  /** The payload's bytes as they came (UTF-8). */
  text: string;
}

export interface EventWatch {
  /** What arrived so far, in arrival order. */
  readonly events: DeliveredEvent[];
  /** The events of one process, in arrival order. */
  of(id: string): DeliveredEvent[];
  /** Resolves once the outbox is empty and nothing arrived for `quietMs` (default 400); throws after `timeoutMs` (default 20 s). */
  settle(options?: { quietMs?: number; timeoutMs?: number }): Promise<void>;
}

/**
 * Listens to the test project's events as an integrator would: through an ordered JetStream
 * consumer on EVENTS from the stream's start (`stream`: each stored event once), or a plain NATS
 * subscription from now on (`core`).
 */
export async function watchEvents(t: Test, svc: Pick<TestService, 'nc' | 'sql'>, via: 'stream' | 'core' = 'stream'): Promise<EventWatch> {
  const filter = `events.${TestProject}.>`;
  const events: DeliveredEvent[] = [];
  let lastArrival = Date.now();
  const record = (subject: string, headers: MsgHdrs | undefined, text: string) => {
    const [, , domain = '', id = '', event = ''] = subject.split('.');
    let payload: unknown;
    try {
      payload = JSON.parse(text);
    } catch {
      payload = text;
    }
    events.push({ subject, domain, id, event, msgId: headers?.get('Nats-Msg-Id') || undefined, payload, text });
    lastArrival = Date.now();
  };
  if (via === 'core') {
    const sub = svc.nc.subscribe(filter, {
      callback: (err, msg) => {
        if (!err) record(msg.subject, msg.headers, msg.string());
      },
    });
    await svc.nc.flush();
    t.teardown(() => sub.unsubscribe());
  } else {
    const consumer = await jetstream(svc.nc).consumers.get(EventStream.name, { filter_subjects: filter });
    const messages = await consumer.consume({ callback: (m) => record(m.subject, m.headers, m.string()) });
    t.teardown(async () => {
      await messages.close();
    });
  }
  return {
    events,
    of: (id) => events.filter((e) => e.id === id),
    async settle({ quietMs = 400, timeoutMs = 20_000 } = {}) {
      const deadline = Date.now() + timeoutMs;
      let emptySince: number | undefined;
      let waiting = 0;
      while (Date.now() < deadline) {
        const [row] = await svc.sql<{ n: number }[]>`select count(*)::int as n from outbox`;
        waiting = row!.n;
        emptySince = waiting > 0 ? undefined : (emptySince ?? Date.now());
        if (emptySince !== undefined && Date.now() - Math.max(emptySince, lastArrival) >= quietMs) return;
        await sleep(50);
      }
      throw new Error(`events did not settle within ${timeoutMs} ms (${waiting} in the outbox, ${events.length} received)`);
    },
  };
}

/** Asserts that every shop's orders are numbered 1..n, each number once; answers `<shop> <n>` per shop. */
export async function assertGaplessOrderNumbers(t: Test, svc: Pick<TestService, 'sql'>): Promise<string[]> {
  const shops = await svc.sql<{ shop_id: string; numbers: string[] }[]>`
    select shop_id, array_agg(sequence_number::text order by sequence_number) as numbers from orders group by shop_id order by shop_id`;
  for (const shop of shops) {
    t.same(
      shop.numbers.map(Number),
      shop.numbers.map((_, i) => i + 1),
      `shop ${shop.shop_id}: order numbers 1..${shop.numbers.length}, each once`,
    );
  }
  return shops.map((s) => `${s.shop_id} ${s.numbers.length}`);
}
