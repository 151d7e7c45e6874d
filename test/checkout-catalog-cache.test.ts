import { deepStrictEqual } from 'node:assert/strict';
import fc from 'fast-check';
import t from 'tap';
import { CheckoutCatalogCache } from '../actors/checkout/catalog-cache.js';
import { cartKeys, loadCheckoutData, type VersionedCheckoutData } from '../actors/checkout/sql.js';
import { priceCart } from '../src/domain/cart.js';
import { gs1CheckDigit } from '../src/domain/codes.js';
import { connectPostgres } from '../src/infra/postgres.js';
import { Cart } from '../subjects/checkout.js';
import { DefaultSettings } from '../subjects/settings.js';
import { startTestService, TestProject } from './support/service.js';

/**
 * The checkout workers price carts from memory while the project's catalog version is the one they
 * read at (actors/checkout/catalog-cache.ts). Every catalog write gives a new version
 * (migrations/0005_catalog_versions.sql), so a checkout asked for after a write is answered never
 * from what was read before it: its answer is always the one a fresh read prices.
 */
const svc = await startTestService(t);
const admin = await svc.token(['productsWrite', 'pricingWrite', 'pricingCategoriesWrite', 'shopsWrite', 'projectsWrite']);
const token = await svc.token(['productsRead']);
const p = `/${TestProject}`;
const oracleSql = connectPostgres({ url: svc.databaseUrl, poolMax: 1 });
t.teardown(() => oracleSql.end());

const ean = (first12: string) => `${first12}${gs1CheckDigit(first12)}`;
const ndjson = (items: object[]) => ({ raw: items.map((i) => JSON.stringify(i)).join('\n'), headers: { 'content-type': 'application/x-ndjson' } });
const eur = (cents: number) => ({ price: (cents / 100).toFixed(2), currency: 'EUR', tier: 'list' });
const versionOf = async (project = TestProject) =>
  (await svc.sql<{ version: string }[]>`select version::text from catalog_versions where project = ${project}`)[0]?.version;
const ok = async (res: Promise<{ status: number; body: unknown }>) => {
  const { status, body } = await res;
  if (status >= 300) throw new Error(`setup answered ${status}: ${JSON.stringify(body)}`);
};

const Skus = ['P0', 'P1', 'P2', 'P3', 'DEP'];
const Codes = [ean('400000000001'), ean('400000000002'), ean('400000000003')];
const Plus = ['4011', '555'];

await ok(svc.request('PUT', `${p}/settings`, { token: admin, body: { currency: 'EUR', taxRates: { normal: '19', reduced: '7' }, paymentMethods: ['cash'] } }));
for (const id of ['c1', 'c2']) await ok(svc.request('POST', `${p}/shops`, { token: admin, body: { id, name: `Shop ${id}` } }));
await ok(svc.request('POST', `${p}/pricing/categories`, { token: admin, body: { id: 'promo', priority: 10, shops: [{ id: 'c1' }] } }));
await ok(svc.request('POST', `${p}/products/_batch`, {
  token: admin,
  ...ndjson([
    { sku: 'P0', name: 'Null', taxCategory: 'normal', codes: [{ code: Codes[0] }] },
    { sku: 'P1', name: 'Eins', taxCategory: 'reduced', depositProduct: 'DEP', codes: [{ code: Codes[1] }] },
    { sku: 'P2', name: 'Zwei', taxCategory: 'reduced', pluSet: [Plus[0]] },
    { sku: 'P3', name: 'Drei', taxCategory: 'normal' },
    { sku: 'DEP', name: 'Pfand', taxCategory: 'normal' },
  ]),
}));
await ok(svc.request('POST', `${p}/pricing/v2/category/batch`, {
  token: admin,
  ...ndjson([...Skus.map((sku, i) => ({ sku, category: 'default', prices: [eur(100 + i)] })), { sku: 'P0', category: 'promo', prices: [eur(50)] }]),
}));

/** JSON as it travels: no undefined fields. */
const wire = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

/** What the service answers, in the terms a fresh read priced by the same domain function gives. */
async function answered(cart: Cart) {
  const res = await svc.request('POST', `${p}/checkout/info`, { token, body: cart });
  if (res.status === 200) {
    const { lineItems, price, shop, availableMethods } = res.body.checkoutInfo;
    return { status: 200, lineItems, price, shop, availableMethods };
  }
  return { status: res.status, type: res.body.type, details: res.body.details };
}

async function freshlyPriced(cart: Cart) {
  const items = cart.items.flatMap((item) => (item.kind === 'product' ? [item] : []));
  const read = await loadCheckoutData(oracleSql, TestProject, cart.shopID, cartKeys(items));
  if (!read.shop) return { status: 404, type: 'shop_not_found', details: undefined };
  const pricing = priceCart(items, read.catalog, {
    categories: read.categories,
    taxRates: read.settings.taxRates,
    currency: read.settings.currency,
    at: new Date(),
    loyaltyCard: Boolean(cart.customer?.loyaltyCard),
    deviceType: cart.deviceType,
    fulfillmentAvailable: false,
  });
  if (!pricing.ok) return { status: 400, type: 'invalid_cart_item', details: pricing.errors };
  return { status: 200, lineItems: pricing.lineItems, price: pricing.price, shop: read.shop, availableMethods: read.settings.paymentMethods };
}

/** A catalog write through the API (or, for `sql`, a statement as an operator would type it). */
type Write =
  | { kind: 'v2Price'; sku: string; category: 'default' | 'promo'; cents: number }
  | { kind: 'legacyPrice'; sku: string; listPrice: number; customerCardPrice: number }
  | { kind: 'product'; sku: string; taxCategory: string; saleStop: boolean; deposit: boolean; code: string | null; plu: string | null }
  | { kind: 'deleteProduct'; sku: string }
  | { kind: 'categoryShops'; shops: string[] }
  | { kind: 'reducedRate'; rate: string }
  | { kind: 'shop'; id: string; name: string }
  | { kind: 'deleteShop'; id: string }
  | { kind: 'sql'; sku: string; taxCategory: string };

async function apply(write: Write): Promise<void> {
  switch (write.kind) {
    case 'v2Price':
      await svc.request('POST', `${p}/pricing/v2/category/batch`, { token: admin, ...ndjson([{ sku: write.sku, category: write.category, prices: [eur(write.cents)] }]) });
      return;
    case 'legacyPrice':
      await svc.request('PUT', `${p}/pricing/products/sku/${write.sku}`, {
        token: admin,
        body: { sku: write.sku, prices: [{ category: 'default', listPrice: write.listPrice, customerCardPrice: write.customerCardPrice }] },
      });
      return;
    case 'product':
      await svc.request('PUT', `${p}/products/sku/${write.sku}`, {
        token: admin,
        body: {
          sku: write.sku,
          name: `Produkt ${write.sku}`,
          taxCategory: write.taxCategory,
          saleStop: write.saleStop,
          ...(write.deposit ? { depositProduct: 'DEP' } : {}),
          codes: write.code ? [{ code: write.code }] : [],
          pluSet: write.plu ? [write.plu] : [],
        },
      });
      return;
    case 'deleteProduct':
      await svc.request('DELETE', `${p}/products/sku/${write.sku}`, { token: admin });
      return;
    case 'categoryShops':
      await svc.request('PUT', `${p}/pricing/categories/id/promo`, { token: admin, body: { priority: 10, shops: write.shops.map((id) => ({ id })) } });
      return;
    case 'reducedRate':
      await svc.request('PUT', `${p}/settings`, { token: admin, body: { currency: 'EUR', taxRates: { normal: '19', reduced: write.rate }, paymentMethods: ['cash'] } });
      return;
    case 'shop': {
      const res = await svc.request('PUT', `${p}/shops/${write.id}`, { token: admin, body: { name: write.name } });
      if (res.status === 404) await svc.request('POST', `${p}/shops`, { token: admin, body: { id: write.id, name: write.name } });
      return;
    }
    case 'deleteShop':
      await svc.request('DELETE', `${p}/shops/${write.id}`, { token: admin });
      return;
    case 'sql':
      await svc.sql`update products set doc = jsonb_set(doc, '{taxCategory}', ${JSON.stringify(write.taxCategory)}::jsonb)
        where project = ${TestProject} and sku = ${write.sku}`;
      return;
  }
}

const sku = fc.constantFrom(...Skus, 'NEW');
const write: fc.Arbitrary<Write> = fc.oneof(
  fc.record({ kind: fc.constant('v2Price' as const), sku, category: fc.constantFrom('default' as const, 'promo' as const), cents: fc.integer({ min: 1, max: 999 }) }),
  fc.record({ kind: fc.constant('legacyPrice' as const), sku, listPrice: fc.integer({ min: 1, max: 999 }), customerCardPrice: fc.integer({ min: 1, max: 999 }) }),
  fc.record({
    kind: fc.constant('product' as const),
    sku,
    taxCategory: fc.constantFrom('normal', 'reduced'),
    saleStop: fc.boolean(),
    deposit: fc.boolean(),
    code: fc.constantFrom(null, ...Codes),
    plu: fc.constantFrom(null, ...Plus),
  }),
  fc.record({ kind: fc.constant('deleteProduct' as const), sku }),
  fc.record({ kind: fc.constant('categoryShops' as const), shops: fc.subarray(['c1', 'c2']) }),
  fc.record({ kind: fc.constant('reducedRate' as const), rate: fc.constantFrom('7', '5', '0') }),
  fc.record({ kind: fc.constant('shop' as const), id: fc.constantFrom('c1', 'c2'), name: fc.constantFrom('Markt', 'Laden') }),
  fc.record({ kind: fc.constant('deleteShop' as const), id: fc.constantFrom('c1', 'c2') }),
  fc.record({ kind: fc.constant('sql' as const), sku, taxCategory: fc.constantFrom('normal', 'reduced') }),
);
const cart: fc.Arbitrary<Cart> = fc
  .record({
    shopID: fc.constantFrom('c1', 'c2'),
    items: fc.array(
      fc.oneof(fc.record({ sku }), fc.record({ scannedCode: fc.constantFrom(...Codes, ...Plus) })).chain((key) => fc.record({ amount: fc.integer({ min: 1, max: 3 }) }).map((a) => ({ ...key, ...a }))),
      { minLength: 1, maxLength: 4 },
    ),
    loyaltyCard: fc.boolean(),
  })
  .map(({ loyaltyCard, ...c }) => Cart.parse({ ...c, ...(loyaltyCard ? { customer: { loyaltyCard: 'CARD-1' } } : {}) }));

t.test('after any catalog write, every checkout is priced as a fresh read of the catalog prices it', async (t) => {
  let checked = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(fc.tuple(write, fc.array(cart, { minLength: 1, maxLength: 3 })), { minLength: 1, maxLength: 4 }), async (steps) => {
      for (const [change, carts] of steps) {
        // Before the write: the same carts, so the write has remembered answers to make stale.
        for (const c of carts) await answered(c);
        await apply(change);
        for (const c of carts) {
          // Twice: the first may read the database, the second is answered from memory.
          for (let i = 0; i < 2; i++) {
            deepStrictEqual(wire(await answered(c)), wire(await freshlyPriced(c)), `after ${JSON.stringify(change)}: ${JSON.stringify(c)}`);
            checked++;
          }
        }
      }
    }),
    { numRuns: 30 },
  );
  t.ok(checked >= 60, `${checked} checkouts matched a fresh read`);
});

t.test('the cache answers from memory: a write that bypasses the version triggers is not seen until the next stamped one', async (t) => {
  // A shop and a product of its own, which the random writes above never touch.
  await ok(svc.request('POST', `${p}/shops`, { token: admin, body: { id: 'c3', name: 'Markt' } }));
  await apply({ kind: 'product', sku: 'FRESH', taxCategory: 'normal', saleStop: false, deposit: false, code: null, plu: null });
  await apply({ kind: 'v2Price', sku: 'FRESH', category: 'default', cents: 300 });
  const c = Cart.parse({ shopID: 'c3', items: [{ sku: 'FRESH', amount: 1 }] });
  const price = async () => ((await answered(c)) as { price?: { price: number } }).price?.price;
  t.equal(await price(), 300);
  t.equal(await price(), 300, 'remembered');
  // session_replication_role = replica skips ordinary triggers, as a logical replication apply does.
  await svc.sql.begin(async (tx) => {
    await tx`set local session_replication_role = replica`;
    await tx`update category_prices set prices = jsonb_set(prices, '{0,price}', '"2.99"') where project = ${TestProject} and sku = 'FRESH'`;
  });
  t.equal(await price(), 300, 'a write without a stamp is not seen: the answer came from memory');
  await svc.sql`update products set doc = doc where project = ${TestProject} and sku = 'FRESH'`;
  t.equal(await price(), 299, 'any stamped write of the project makes the next checkout read again');
});

t.test('every catalog table stamps its project, in the writing transaction, and only when rows change', async (t) => {
  const tables = ['products', 'product_codes', 'product_plus', 'category_prices', 'legacy_prices', 'pricing_categories', 'pricing_category_shops', 'shops', 'project_settings'];
  await apply({ kind: 'legacyPrice', sku: 'P0', listPrice: 100, customerCardPrice: 90 });
  // A product of its own, with a code and a PLU no random write above uses (a PLU is unique in a
  // project: one the random writes gave another product would refuse this one, leaving no code row).
  await ok(
    svc.request('PUT', `${p}/products/sku/STAMPS`, {
      token: admin,
      body: { sku: 'STAMPS', name: 'Stempel', taxCategory: 'reduced', codes: [{ code: ean('400000000099') }], pluSet: ['7777'] },
    }),
  );
  await apply({ kind: 'categoryShops', shops: ['c1', 'c2'] });
  for (const table of tables) {
    const count = await svc.sql<{ n: number }[]>`select count(*)::int as n from ${svc.sql(table)} where project = ${TestProject}`;
    t.ok(count[0]!.n > 0, `${table} has rows of the project`);
    let before = await versionOf();
    await svc.sql`update ${svc.sql(table)} set project = project where project = ${TestProject}`;
    t.not(await versionOf(), before, `an update of ${table} stamps`);

    before = await versionOf();
    await svc.sql`update ${svc.sql(table)} set project = project where project = 'no-such-project'`;
    t.equal(await versionOf(), before, `an update of ${table} that touches no row does not`);

    await svc.sql
      .begin(async (tx) => {
        await tx`update ${tx(table)} set project = project where project = ${TestProject}`;
        throw new Error('roll back');
      })
      .catch(() => {});
    t.equal(await versionOf(), before, `a rolled back update of ${table} does not`);
    t.same(await svc.sql`select * from catalog_version_stamps`, [], 'no note is left behind');
  }
  const before = await versionOf();
  await svc.sql.begin(async (tx) => {
    await tx`update products set project = project where project = ${TestProject}`;
    t.equal((await tx<{ version: string }[]>`select version::text from catalog_versions where project = ${TestProject}`)[0]?.version, before, 'inside the transaction, the version is still the old one');
  });
  t.not(await versionOf(), before, 'the commit gave the new one');
});

t.test('writers of one project do not wait for each other until they commit', async (t) => {
  const other = connectPostgres({ url: svc.databaseUrl, poolMax: 1 });
  t.teardown(() => other.end());
  const before = await versionOf();
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let written!: () => void;
  const firstWrote = new Promise<void>((resolve) => (written = resolve));
  const first = svc.sql.begin(async (tx) => {
    await tx`update products set doc = doc where project = ${TestProject} and sku = 'FRESH'`;
    written();
    await held;
  });
  await firstWrote;
  await other.begin(async (tx) => {
    await tx`set local lock_timeout = '2s'`;
    await tx`update category_prices set prices = prices where project = ${TestProject} and sku = 'FRESH'`;
  });
  const afterSecond = await versionOf();
  t.not(afterSecond, before, 'the second transaction committed, with a new version, while the first was open');
  release();
  await first;
  t.not(await versionOf(), afterSecond, 'the first one stamped at its own commit');
});

t.test('TRUNCATE of a catalog table gives every project a new version', async (t) => {
  const rollBack = new Error('roll back');
  await ok(svc.request('PUT', '/other-project/settings', { token: await svc.token(['projectsWrite'], { project: 'other-project' }), body: { currency: 'EUR', taxRates: { normal: '19' }, paymentMethods: ['cash'] } }));
  const before = [await versionOf(), await versionOf('other-project')];
  await svc.sql.begin(async (tx) => {
    await tx`truncate pricing_category_shops`;
    const after = await tx<{ project: string; version: string }[]>`select project, version::text from catalog_versions where project in (${TestProject}, 'other-project') order by project = ${TestProject} desc`;
    t.not(after[0]?.version, before[0]);
    t.not(after[1]?.version, before[1]);
    throw rollBack;
  }).catch((err: unknown) => {
    if (err !== rollBack) throw err;
  });
});

const AShop = { externalId: '', name: 'Shop', email: '', phone: '', street: '', zip: '', city: '', state: '', country: '' };

t.test('the cache remembers per project and shop, only at one version, and drops everything past its bound', async (t) => {
  const read = (version: string, skus: string[]): VersionedCheckoutData => ({
    version,
    settings: DefaultSettings,
    categories: ['default'],
    shop: AShop,
    catalog: {
      bySku: new Map(skus.map((s) => [s, { product: { sku: s } as never, isDeposit: false, prices: { v2: new Map(), legacy: new Map() } }])),
      skuOfCode: new Map(),
      skuOfPlu: new Map(),
    },
  });
  const keys = (skus: string[], codes: string[] = []) => ({ skus, codes, plus: [] });
  const cache = new CheckoutCatalogCache(10);
  cache.remember('a', 's', keys(['A', 'GONE']), read('1', ['A']));
  t.ok(cache.lookup('a', 's', '1', keys(['A'])), 'a remembered product');
  t.ok(cache.lookup('a', 's', '1', keys(['GONE'])), 'a SKU remembered as absent');
  t.notOk(cache.lookup('a', 's', '2', keys(['A'])), 'not at another version');
  t.notOk(cache.lookup('a', 't', '1', keys(['A'])), 'not for another shop');
  t.notOk(cache.lookup('b', 's', '1', keys(['A'])), 'not for another project');
  t.notOk(cache.lookup('a', 's', '1', keys(['A', 'B'])), 'not when one key is unknown');
  t.notOk(cache.lookup('a', 's', '1', keys(['A'], ['123'])), 'not when a code is unknown');
  cache.remember('a', 's', keys(['B']), read('2', ['B']));
  t.notOk(cache.lookup('a', 's', '2', keys(['A'])), 'a new version forgets the old one');
  t.equal(cache.size, 1);
  cache.remember('b', 's', keys(['1', '2', '3', '4', '5']), read('1', ['1', '2', '3', '4', '5']));
  t.equal(cache.size, 6);
  cache.remember('c', 's', keys(['6', '7', '8', '9', '10']), read('1', ['6', '7', '8', '9', '10']));
  t.equal(cache.size, 5, 'past the bound, everything else was dropped');
  t.notOk(cache.lookup('b', 's', '1', keys(['1'])));
  t.ok(cache.lookup('c', 's', '1', keys(['6'])));
  const eleven = [...'abcdefghijk'];
  cache.remember('d', 's', keys(eleven), read('1', eleven));
  t.equal(cache.size, 0, 'a read larger than the bound alone is not remembered');
  const none = new CheckoutCatalogCache(0);
  none.remember('a', 's', keys(['A']), read('1', ['A']));
  t.notOk(none.lookup('a', 's', '1', keys(['A'])), 'a bound of 0 remembers nothing');
});

t.test('a product is remembered with its deposit, or not at all', async (t) => {
  const entry = (sku: string, depositProduct?: string) => ({ product: { sku, depositProduct } as never, isDeposit: false, prices: { v2: new Map(), legacy: new Map() } });
  const cache = new CheckoutCatalogCache(100);
  const base = { settings: DefaultSettings, categories: ['default'], shop: AShop };
  // MILK came with its deposit BOTTLE; BOTTLE's own deposit CRATE was not read.
  cache.remember('a', 's', { skus: ['MILK'], codes: [], plus: [] }, {
    ...base,
    version: '1',
    catalog: { bySku: new Map([['MILK', entry('MILK', 'BOTTLE')], ['BOTTLE', entry('BOTTLE', 'CRATE')]]), skuOfCode: new Map(), skuOfPlu: new Map() },
  });
  t.ok(cache.lookup('a', 's', '1', { skus: ['MILK'], codes: [], plus: [] }));
  t.notOk(cache.lookup('a', 's', '1', { skus: ['BOTTLE'], codes: [], plus: [] }), 'a deposit whose own deposit was never read is read again');
  // JUICE names a deposit the read did not find: it does not exist.
  cache.remember('a', 's', { skus: ['JUICE'], codes: [], plus: [] }, {
    ...base,
    version: '1',
    catalog: { bySku: new Map([['JUICE', entry('JUICE', 'NOPE')]]), skuOfCode: new Map(), skuOfPlu: new Map() },
  });
  t.ok(cache.lookup('a', 's', '1', { skus: ['JUICE', 'NOPE'], codes: [], plus: [] }));
});
