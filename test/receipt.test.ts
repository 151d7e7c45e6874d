import t from 'tap';
import { gs1CheckDigit } from '../src/domain/codes.js';
import { checkoutPrice } from '../src/domain/tax.js';
import { pdfText, withoutPdftotext } from './support/pdf.js';
import { startTestService, TestProject } from './support/service.js';

const svc = await startTestService(t);
const p = `/${TestProject}`;
const admin = await svc.token(['productsWrite', 'pricingWrite', 'shopsWrite', 'projectsWrite']);
const customer = await svc.token(['productsRead', 'updatePricingCheckoutProcess']);
const payment = await svc.token(['setPaymentState']);
const orders = await svc.token(['ordersRead']);
const alice = await svc.token([], { appUserID: 'alice' });
const bob = await svc.token([], { appUserID: 'bob' });
const nobody = await svc.token([]);
const emptyClaim = await svc.token([], { appUserID: '' });

const ndjson = (items: object[]) => ({ raw: items.map((i) => JSON.stringify(i)).join('\n'), headers: { 'content-type': 'application/x-ndjson' } });
const eur = (price: string) => ({ price, currency: 'EUR', tier: 'list' });
const ean = (first12: string) => `${first12}${gs1CheckDigit(first12)}`;
const rollsByUnits = ean('270077700006'); // in-store code: units, PLU 777, 6 pieces

await svc.request('PUT', `${p}/settings`, {
  token: admin,
  body: {
    currency: 'EUR',
    taxRates: { normal: '19', reduced: '7' },
    paymentMethods: ['cash', 'girocard'],
    locale: 'de-DE',
    companyName: 'Müller Handels GmbH',
    taxNumber: '12/345/67890',
    vatID: 'DE123456789',
    companyAdress: { street: 'Hauptstraße 5', zip: '80331', city: 'München', country: 'Deutschland' },
  },
});
await svc.request('POST', `${p}/shops`, { token: admin, body: { id: 's1', name: 'Markt Süd', externalId: 'E-1', street: 'Weißenseer Weg 3', zip: '13055', city: 'Berlin' } });
await svc.request('POST', `${p}/products/_batch`, {
  token: admin,
  ...ndjson([
    { sku: 'MILK', name: 'Frische Vollmilch 1 l', taxCategory: 'reduced', depositProduct: 'DEP-015' },
    { sku: 'DEP-015', name: 'Pfand 0,15', taxCategory: 'normal' },
    { sku: 'APPLE', name: 'Äpfel Elstar', productType: 'weighable', referenceUnit: 'kg', encodingUnit: 'g', pluSet: ['4011'], taxCategory: 'reduced' },
    { sku: 'WATER', name: 'Mineralwasser still', taxCategory: 'normal' },
    { sku: 'ROLL', name: 'Weizenbrötchen', referenceUnit: 'piece', pluSet: ['777'], taxCategory: 'reduced' },
    { sku: 'CHOC', name: 'Zartbitter-Schokolade 85 % – extra große Tafel für Genießer', taxCategory: 'normal' },
  ]),
});
await svc.request('POST', `${p}/pricing/v2/category/batch`, {
  token: admin,
  ...ndjson([
    { sku: 'MILK', category: 'default', prices: [eur('1.19')] },
    { sku: 'DEP-015', category: 'default', prices: [eur('0.15')] },
    { sku: 'APPLE', category: 'default', prices: [eur('2.99')] },
    { sku: 'WATER', category: 'default', prices: [eur('0.79')] },
    { sku: 'ROLL', category: 'default', prices: [eur('0.35')] },
    { sku: 'CHOC', category: 'default', prices: [eur('2.49')] },
  ]),
});

interface Checkout {
  appUserID?: string;
  discount?: boolean;
  end?: 'successful' | 'failed';
  items?: object[];
}

const Items = [
  { id: 'milk', sku: 'MILK', amount: 2 },
  { id: 'apple', scannedCode: '4011', amount: 1, weight: 1234, weightUnit: 'g' },
  { id: 'water', sku: 'WATER', amount: 3 },
  { id: 'rolls', scannedCode: rollsByUnits, amount: 1 },
  { id: 'choc', sku: 'CHOC', amount: 1 },
];
const PaymentResult = { pan: '6805123412341234', aid: 'A7B8C9', time: '2026-11-22T13:03:10Z', paymentType: '00' };

/**
 * A checkout through the API, paid by girocard at a terminal. With `discount`, the pricing is
 * updated before payment with a promotion line (10 % off the apples), as a PoS or promotions would.
 */
async function checkout(options: Checkout = {}): Promise<any> {
  const cart = { shopID: 's1', session: 'sess', clientID: 'phone', appUserID: options.appUserID ?? 'alice', items: options.items ?? Items };
  const info = await svc.request('POST', `${p}/checkout/info`, { token: customer, body: cart });
  if (info.status !== 200) throw new Error(`checkout info: ${info.status} ${info.text}`);
  const created = await svc.request('POST', `${p}/checkout/process`, { token: customer, body: { signedCheckoutInfo: info.body, paymentMethod: 'girocard' } });
  if (created.status !== 201) throw new Error(`process: ${created.status} ${created.text}`);
  const id: string = created.body.id;
  if (options.discount) {
    const lineItems = [...info.body.checkoutInfo.lineItems, { id: 'promo-1', type: 'promotion', name: 'Aktion: Äpfel -10 %', refersTo: 'apple', sku: '', amount: 1, price: -37, totalPrice: -37, taxRate: '7' }];
    const patched = await svc.request('PATCH', `${p}/checkout/process/${id}`, { token: customer, body: { pricing: { lineItems, price: checkoutPrice(lineItems) } } });
    if (patched.status !== 200) throw new Error(`pricing: ${patched.status} ${patched.text}`);
  }
  for (const body of [{ paymentState: 'processing' }, { paymentState: options.end ?? 'successful', paymentResult: PaymentResult }]) {
    const moved = await svc.request('PATCH', `${p}/checkout/process/${id}`, { token: payment, body });
    if (moved.status !== 200) throw new Error(`payment: ${moved.status} ${moved.text}`);
  }
  const order = await svc.request('GET', `${p}/orders/${id}`, { token: orders });
  if (order.status !== 200) throw new Error(`order: ${order.status} ${order.text}`);
  return order.body;
}

interface Download {
  status: number;
  headers: Headers;
  bytes: Buffer;
  json: any;
}

async function receipt(id: string, token: string, headers: Record<string, string> = {}): Promise<Download> {
  const res = await fetch(`${svc.url}${p}/orders/${id}/receipt`, { headers: { authorization: `Bearer ${token}`, ...headers } });
  const bytes = Buffer.from(await res.arrayBuffer());
  const json = (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(bytes.toString()) : undefined;
  return { status: res.status, headers: res.headers, bytes, json };
}

const money = new Intl.NumberFormat('de-DE', { style: 'currency', currency: 'EUR' });
const euro = (cents: number) => money.format(cents / 100).replace(/\u00a0/g, ' ');
/** Rows compared without their spacing: pdftotext places words by their position. */
const squeeze = (text: string) => text.replace(/\s+/g, '');

t.test('prints the receipt of a final order: shop, company, sale, every line, total, payment and tax table, adding up to the order', { skip: withoutPdftotext }, async (t) => {
  const order = await checkout({ discount: true });
  t.same(order.links.receipt, { href: `${p}/orders/${order.id}/receipt` }, 'the order links its receipt');
  const res = await receipt(order.id, orders);
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'application/pdf');
  t.equal(res.bytes.subarray(0, 5).toString(), '%PDF-', 'a PDF');
  t.equal(Number(res.headers.get('content-length')), res.bytes.length);
  const text = await pdfText(res.bytes);
  const flat = squeeze(text);
  const has = (row: string, what = row) => t.ok(flat.includes(squeeze(row)), `the receipt shows ${what}`);

  for (const row of ['Markt Süd', 'Weißenseer Weg 3', '13055 Berlin', 'Müller Handels GmbH', 'Hauptstraße 5', '80331 München', 'St.-Nr. 12/345/67890', 'USt-IdNr. DE123456789']) has(row);
  const when = new Intl.DateTimeFormat('de-DE', { timeZone: 'Europe/Berlin', dateStyle: 'medium', timeStyle: 'medium' }).format(new Date(order.finalizedAt));
  has(`Datum ${when}`, 'the time of the sale in Europe/Berlin');
  has(`Bon-Nr. ${order.sequenceNumber}`, "the shop's sequence number");

  const byId = Object.fromEntries(order.lineItems.map((l: any) => [l.id, l]));
  t.equal(order.lineItems.length, 7, 'milk, its deposit, apples, water, rolls, chocolate, the discount');
  has(`Frische Vollmilch 1 l ${euro(238)} B`, 'the milk with its total and tax mark');
  has(`2 × ${euro(119)}`, "the milk's amount × unit price");
  has(`Pfand 0,15 ${euro(30)} A`, 'the deposit as a line of its own');
  has(`2 × ${euro(15)}`, "the deposit's amount × unit price");
  has(`Äpfel Elstar ${euro(byId.apple.totalPrice)} B`, 'the weighed apples');
  has(`1,234 kg × ${euro(299)}/kg`, 'weight × price per kg');
  has(`Mineralwasser still ${euro(237)} A`, 'the water');
  has(`3 × ${euro(79)}`, "the water's amount × unit price");
  has(`Weizenbrötchen ${euro(210)} B`, 'the rolls');
  has(`6 Stk. × ${euro(35)}`, 'units × price per piece');
  const long = 'Zartbitter-Schokolade 85 % – extra große Tafel für Genießer';
  t.ok(flat.replace(squeeze(`${euro(249)} A`), '').includes(squeeze(long)), 'a long name, wrapped under its amount, not cut');
  t.ok(flat.includes(squeeze(`${euro(249)} A`)), "the long name's amount");
  has(`Aktion: Äpfel -10 % ${euro(-37)} B`, 'the discount as a line of its own');

  has(`SUMME EUR ${euro(order.price.price)}`, 'the total');
  has('Zahlungsart girocard');
  has(`Betrag ${euro(order.paidAmount)}`);
  has('Karte ************1234', 'the masked card number');
  has('Autorisierungscode A7B8C9', "the terminal's authorization code");
  has(`Zeitpunkt ${new Intl.DateTimeFormat('de-DE', { timeZone: 'Europe/Berlin', dateStyle: 'medium', timeStyle: 'medium' }).format(new Date(PaymentResult.time))}`);
  t.notOk(flat.includes('6805123412341234'), 'never the whole card number');

  const { tax, taxNet, taxPre } = order.price;
  has('MwSt. Netto Steuer Brutto', 'the tax table');
  has(`A 19 % ${euro(taxNet['19'])} ${euro(tax['19'])} ${euro(taxPre['19'])}`, 'the 19 % row');
  has(`B 7 % ${euro(taxNet['7'])} ${euro(tax['7'])} ${euro(taxPre['7'])}`, 'the 7 % row');
  has(`Summe ${euro(order.price.netPrice)} ${euro(tax['19'] + tax['7'])} ${euro(order.price.price)}`, 'the sums row');
  has(`Beleg-ID ${order.id}`, 'the order id under its QR code');

  // The sums: the line amounts printed add up to the printed total, which is the order's.
  const lines = text.slice(text.indexOf('Kasse'), text.indexOf('SUMME')).split('\n');
  const amounts = lines.flatMap((row) => {
    const m = /(-?[\d.]+,\d\d) € [AB]\s*$/.exec(row);
    return m ? [Math.round(Number(m[1]!.replace(/\./g, '').replace(',', '.')) * 100)] : [];
  });
  t.equal(amounts.length, 7, 'one printed amount per line item');
  t.equal(amounts.reduce((a, b) => a + b, 0), order.price.price, 'the printed lines add up to the total');
  t.equal(order.lineItems.reduce((s: number, l: any) => s + l.totalPrice, 0), order.price.price, "the order's lines add up to its price");
  t.equal(taxPre['19'] + taxPre['7'], order.price.price, 'the gross of the rates is the total');
  t.equal(taxNet['19'] + tax['19'], taxPre['19']);
  t.equal(taxNet['7'] + tax['7'], taxPre['7']);
});

t.test('answers the same receipt again, made once, with an ETag a client may revalidate', async (t) => {
  const order = await checkout();
  const first = await receipt(order.id, orders);
  const again = await receipt(order.id, orders);
  t.equal(first.status, 200);
  t.ok(first.bytes.equals(again.bytes), 'the same bytes');
  const etag = first.headers.get('etag');
  t.match(etag, /^"[\w-]+"$/, 'a strong ETag');
  t.equal(again.headers.get('etag'), etag);
  t.equal(first.headers.get('cache-control'), 'private, max-age=86400');
  const [row] = await svc.sql<{ n: number }[]>`select count(*)::int as n from receipts where order_id = ${order.id}`;
  t.equal(row!.n, 1, 'stored once');

  const revalidated = await receipt(order.id, orders, { 'if-none-match': etag! });
  t.equal(revalidated.status, 304);
  t.equal(revalidated.bytes.length, 0, 'no body');
  t.equal(revalidated.headers.get('etag'), etag);
  t.equal((await receipt(order.id, orders, { 'if-none-match': `W/${etag}, "other"` })).status, 304, 'a list, weak comparison');
  t.equal((await receipt(order.id, orders, { 'if-none-match': '"other"' })).status, 200, 'another ETag gets the receipt');

  const sdkPath = await fetch(`${svc.url}${p}/orders/id/${order.id}/receipt`, { headers: { authorization: `Bearer ${orders}` } });
  t.equal(sdkPath.status, 200, 'also at the path the iOS SDK builds, /{project}/orders/id/{id}/receipt');
  t.ok(Buffer.from(await sdkPath.arrayBuffer()).equals(first.bytes));
  t.equal((await svc.request('GET', `${p}/orders/${order.id}`, { token: orders })).status, 200, 'the order itself is where it was');
});

t.test('makes a receipt once when many ask for it at the same moment', async (t) => {
  const order = await checkout();
  const all = await Promise.all(Array.from({ length: 8 }, () => receipt(order.id, orders)));
  t.same(all.map((r) => r.status), Array(8).fill(200));
  t.equal(new Set(all.map((r) => r.headers.get('etag'))).size, 1, 'one ETag');
  t.ok(all.every((r) => r.bytes.equals(all[0]!.bytes)), 'the same bytes for everyone');
});

t.test('has no receipt for an order that is not final, nor for an order that does not exist', async (t) => {
  const failed = await checkout({ end: 'failed' });
  t.equal(failed.state, 'paymentFailed');
  t.notOk(failed.links.receipt, 'and links none');
  const res = await receipt(failed.id, orders);
  t.equal(res.status, 404);
  t.equal(res.json.type, 'not_found');
  t.match(res.json.message, /paymentFailed: only final orders have a receipt/);
  const missing = await receipt('no-such-order-0000000000', orders);
  t.equal(missing.status, 404);
  t.equal(missing.json.type, 'not_found');
  const [row] = await svc.sql<{ n: number }[]>`select count(*)::int as n from receipts where order_id = ${failed.id}`;
  t.equal(row!.n, 0, 'nothing stored');
});

t.test("gives an app user the receipts of their own orders and refuses everyone else's without telling whether they exist", async (t) => {
  const mine = await checkout({ appUserID: 'alice' });
  const own = await receipt(mine.id, alice);
  t.equal(own.status, 200, 'the owner, by the appUserID claim alone');
  t.equal(own.bytes.subarray(0, 5).toString(), '%PDF-');

  const other = await receipt(mine.id, bob);
  t.equal(other.status, 403);
  t.equal(other.json.type, 'forbidden');
  const unknown = await receipt('no-such-order-0000000000', bob);
  t.equal(unknown.status, 403, 'an id that does not exist is refused alike');
  t.same(unknown.json, other.json, 'the same answer');

  const failed = await checkout({ appUserID: 'alice', end: 'failed' });
  t.equal((await receipt(failed.id, alice)).status, 404, 'the owner learns that their order is not final');
  t.equal((await receipt(failed.id, bob)).status, 403, 'anyone else does not');

  const anonymous = await checkout({ appUserID: '' });
  const empty = await receipt(anonymous.id, emptyClaim);
  t.equal(empty.status, 403, 'an empty appUserID claim is no app user: it never matches an order without one');
  t.equal((await receipt(mine.id, nobody)).status, 403, 'a token with neither ordersRead nor an app user');
  t.equal((await receipt(anonymous.id, orders)).status, 200, 'ordersRead reads every receipt');
});

t.test('refuses an order id that no database could store, naming it', async (t) => {
  const res = await receipt('%00', orders);
  t.equal(res.status, 400);
  t.equal(res.json.type, 'bad_request');
  t.match(res.json.message, /id/);
});
