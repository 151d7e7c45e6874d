import type { CartItem, LineItem, LineItemError, LineItemErrorType } from '../../subjects/checkout.js';
import type { Product } from '../../subjects/products.js';
import { interpretCode, type EmbeddedValue } from './codes.js';
import { divideRounded } from './money.js';
import { resolvePrice, type ProductPrices } from './pricing.js';
import { checkoutPrice, type Price } from './tax.js';
import { isUnit, unitRatio } from '../../subjects/formats/units.js';

/**
 * Prices a cart: every item found, checked and priced, deposits added, taxes summed. Pure: the
 * caller loads the catalog entries of the cart in one round trip.
 *
 * - An item is found by its SKU, else its scanned code: a product code, else a GS1 in-store code
 *   (codes.ts) with its PLU, else a PLU short code.
 * - Refused items are all reported at once (LineItemError types in subjects/checkout.ts).
 * - Quantity prices count the amounts of all items with the same quantityPriceKey (else SKU).
 * - Values the app decoded from a code come with the item (`price`, `weight` + `weightUnit`,
 *   `units`) and are used; where this platform decodes the code itself (a GS1 in-store code of the
 *   product's PLU), the code's value wins. A price from the code or the app has priceOrigin
 *   `client`; with `weightUnit` (or the product's encodingUnit) `price` it is the package's total,
 *   otherwise it takes the place of the unit price. Every other price comes from the catalog.
 * - A product priced per measure (referenceUnit other than piece) needs a weight, from the code or
 *   the item; its total is price × weight converted to the reference unit, rounded half away from
 *   zero per package. A product priced per piece multiplies its price by the item's units.
 * - A product with a depositProduct adds a `deposit` line item right after it, referring to it.
 */
export interface CatalogEntry {
  product: Product;
  prices: ProductPrices;
  /** True when the product is the depositProduct of another product (or of type deposit). */
  isDeposit: boolean;
}

export interface Catalog {
  bySku: ReadonlyMap<string, CatalogEntry>;
  /** Product code → SKU. */
  skuOfCode: ReadonlyMap<string, string>;
  /** PLU → SKU. */
  skuOfPlu: ReadonlyMap<string, string>;
}

export interface CartContext {
  /** The shop's pricing categories in order, `default` last. */
  categories: readonly string[];
  /** Tax rate (string-encoded decimal) per tax category. */
  taxRates: Readonly<Record<string, string>>;
  currency: string;
  at: Date;
  loyaltyCard: boolean;
  deviceType: string;
  /** Whether a fulfillment service is configured: products with a fulfillmentType need one. */
  fulfillmentAvailable: boolean;
}

export type CartPricing = { ok: true; lineItems: LineItem[]; price: Price } | { ok: false; errors: LineItemError[] };

interface Located {
  id: string;
  item: CartItem;
  entry: CatalogEntry;
  embedded: EmbeddedValue | undefined;
}

export function priceCart(items: readonly CartItem[], catalog: Catalog, context: CartContext): CartPricing {
  const errors: LineItemError[] = [];
  const located: Located[] = [];
  items.forEach((item, index) => {
    const id = item.id ?? String(index + 1);
    const found = locate(item, catalog);
    if ('error' in found) return errors.push({ ...found.error, id });
    const refusal = checkItem(found.entry, catalog, context);
    if (refusal) return errors.push({ sku: found.entry.product.sku, ...refusal, id });
    located.push({ id, item, entry: found.entry, embedded: found.embedded });
  });
  errors.push(...maxSaleQuantityErrors(located));

  // Every item that was found is priced too, so that all refusals come back at once.
  const counted = new Map<string, number>();
  for (const { item, entry } of located) counted.set(quantityKey(entry.product), (counted.get(quantityKey(entry.product)) ?? 0) + item.amount);

  const lineItems: LineItem[] = [];
  for (const l of located) {
    const priced = priceItem(l, counted.get(quantityKey(l.entry.product)) ?? l.item.amount, context);
    if ('error' in priced) {
      errors.push({ sku: l.entry.product.sku, ...priced.error, id: l.id });
      continue;
    }
    lineItems.push(priced.line);
    const deposit = depositLine(l, priced.line, catalog, context);
    if (deposit && 'error' in deposit) errors.push({ ...deposit.error, id: l.id });
    else if (deposit) lineItems.push(deposit);
  }
  if (errors.length) return { ok: false, errors };
  return { ok: true, lineItems, price: checkoutPrice(lineItems) };
}

type Refusal = { type: LineItemErrorType; message: string };

function locate(item: CartItem, catalog: Catalog): { entry: CatalogEntry; embedded: EmbeddedValue | undefined } | { error: { sku: string } & Refusal } {
  const code = item.scannedCode;
  const interpreted = code === undefined ? undefined : interpretCode(code);
  const sku = item.sku ?? (code === undefined ? undefined : catalog.skuOfCode.get(code));
  if (sku !== undefined) {
    const entry = catalog.bySku.get(sku);
    if (!entry || entry.product.deleted) return { error: { sku, type: 'product_not_found', message: `no product with SKU ${sku}` } };
    // An in-store code whose PLU is this product's also tells the price, weight or units.
    const embedded = interpreted?.kind === 'instore' && interpreted.plus.some((plu) => catalog.skuOfPlu.get(plu) === sku) ? interpreted.embedded : undefined;
    return { entry, embedded };
  }
  if (interpreted?.kind === 'invalid') return { error: { sku: '', type: 'invalid_code', message: interpreted.reason } };
  if (interpreted?.kind === 'instore' || interpreted?.kind === 'plu') {
    const pluSku = interpreted.plus.map((plu) => catalog.skuOfPlu.get(plu)).find((s) => s !== undefined);
    const entry = pluSku === undefined ? undefined : catalog.bySku.get(pluSku);
    if (entry && !entry.product.deleted) return { entry, embedded: interpreted.kind === 'instore' ? interpreted.embedded : undefined };
  }
  return { error: { sku: '', type: 'product_not_found', message: `no product with the code ${code}` } };
}

function checkItem(entry: CatalogEntry, catalog: Catalog, context: CartContext): Refusal | undefined {
  const p = entry.product;
  if (p.saleStop) return { type: 'sale_stop', message: `${p.name || p.sku} cannot be sold` };
  if (p.notForSale) return { type: 'not_for_sale', message: p.scanMessage || `${p.name || p.sku} is sold at the cashier` };
  if (entry.isDeposit) return { type: 'deposit_alone', message: `${p.name || p.sku} is a deposit; it comes with the product that needs it` };
  if (p.allowedOnDeviceTypes.length && !(p.allowedOnDeviceTypes as string[]).includes(context.deviceType)) {
    return { type: 'device_not_allowed', message: `${p.name || p.sku} is sold on ${p.allowedOnDeviceTypes.join(', ')} only` };
  }
  if (context.taxRates[p.taxCategory] === undefined) return { type: 'no_tax_rate', message: `no tax rate for the tax category "${p.taxCategory}" of ${p.sku}` };
  if (p.fulfillmentType && !context.fulfillmentAvailable) {
    return { type: 'fulfillment_unavailable', message: `${p.name || p.sku} is handed out by a ${p.fulfillmentType}, and no fulfillment service is configured` };
  }
  if (p.depositProduct && !catalog.bySku.get(p.depositProduct)) {
    return { type: 'product_not_found', message: `the deposit product ${p.depositProduct} of ${p.sku} does not exist` };
  }
  return undefined;
}

function maxSaleQuantityErrors(located: readonly Located[]): LineItemError[] {
  const amounts = new Map<string, { amount: number; product: Product; id: string }>();
  for (const { item, entry, id } of located) {
    const current = amounts.get(entry.product.sku);
    amounts.set(entry.product.sku, { amount: (current?.amount ?? 0) + item.amount, product: entry.product, id: current?.id ?? id });
  }
  return [...amounts.values()]
    .filter(({ amount, product }) => product.maxSaleQuantity !== undefined && amount > product.maxSaleQuantity)
    .map(({ product, amount, id }) => ({
      sku: product.sku,
      type: 'max_sale_quantity' as const,
      message: product.maxSaleText || `at most ${product.maxSaleQuantity} of ${product.name || product.sku} per checkout (${amount} in the cart)`,
      id,
    }));
}

function quantityKey(product: Product): string {
  return product.quantityPriceKey ? `key:${product.quantityPriceKey}` : `sku:${product.sku}`;
}

/**
 * What a decoded in-store code carries for this product: a weight-type code of a product whose
 * encodingUnit is `price` or `piece` carries its price or its units.
 */
function embeddedFor(product: Product, embedded: EmbeddedValue | undefined): EmbeddedValue | undefined {
  if (embedded?.kind !== 'weight') return embedded;
  if (product.encodingUnit === 'price') return { kind: 'price', value: embedded.value };
  if (product.encodingUnit === 'piece') return { kind: 'units', value: embedded.value };
  return embedded;
}

function priceItem(located: Located, counted: number, context: CartContext): { line: LineItem } | { error: Refusal } {
  const { id, item, entry } = located;
  const p = entry.product;
  const embedded = embeddedFor(p, located.embedded);
  const units = embedded?.kind === 'units' ? embedded.value : (item.units ?? 0);
  const line = (price: number, priceOrigin: LineItem['priceOrigin'], totalPrice: number, weight = 0, weightUnit = ''): LineItem => ({
    id,
    type: 'default',
    refersTo: null,
    sku: p.sku,
    amount: item.amount,
    weight,
    // The iOS SDK refuses a checkout whose line has an empty unit: absent unless there is one.
    ...(weightUnit ? { weightUnit } : {}),
    ...(p.referenceUnit ? { referenceUnit: p.referenceUnit } : {}),
    units,
    price,
    priceOrigin,
    totalPrice,
    name: p.name,
    taxRate: context.taxRates[p.taxCategory] as string,
    scannedCode: item.scannedCode ?? '',
    saleRestriction: p.saleRestriction ?? '',
    ...(p.fulfillmentType ? { fulfillmentType: p.fulfillmentType } : {}),
  });

  if (embedded?.kind === 'price') return { line: line(embedded.value, 'client', embedded.value * item.amount) };
  const clientPrice = item.price ?? undefined;
  // A price-encoded product: the app read the package's total from its code.
  if (clientPrice !== undefined && (item.weightUnit === 'price' || p.encodingUnit === 'price')) {
    return { line: line(clientPrice, 'client', clientPrice * item.amount) };
  }
  let price: number;
  let priceOrigin: LineItem['priceOrigin'] = 'master';
  if (clientPrice !== undefined) {
    price = clientPrice;
    priceOrigin = 'client';
  } else {
    const resolved = resolvePrice(entry.prices, { categories: context.categories, at: context.at, quantity: counted, loyaltyCard: context.loyaltyCard, currency: context.currency });
    if (!resolved) return { error: { type: 'no_price', message: `${p.name || p.sku} has no price in this shop` } };
    price = resolved.unitPrice;
  }

  const reference = p.referenceUnit;
  if (reference && reference !== 'piece') {
    const weight = embedded?.kind === 'weight' ? embedded.value : item.weight;
    const unitText = embedded?.kind === 'weight' ? (p.encodingUnit ?? 'g') : (item.weightUnit ?? p.encodingUnit ?? reference);
    if (!weight) return { error: { type: 'weight_required', message: `${p.name || p.sku} is priced per ${reference} and needs a weight` } };
    if (!isUnit(reference)) return { error: { type: 'weight_required', message: `${p.name || p.sku} is priced per ${reference}, a unit this platform cannot convert to` } };
    const ratio = isUnit(unitText) ? unitRatio(unitText, reference) : undefined;
    if (!ratio) return { error: { type: 'weight_required', message: `a weight in ${unitText} cannot price ${p.name || p.sku}, which is priced per ${reference}` } };
    const perPackage = divideRounded(BigInt(price) * BigInt(weight) * ratio.numerator, ratio.denominator);
    return { line: line(price, priceOrigin, perPackage * item.amount, weight, unitText) };
  }
  const pieces = reference === 'piece' && units > 0 ? units : 1;
  return { line: line(price, priceOrigin, price * pieces * item.amount) };
}

function depositLine(l: Located, line: LineItem, catalog: Catalog, context: CartContext): LineItem | { error: { sku: string } & Refusal } | undefined {
  const sku = l.entry.product.depositProduct;
  const deposit = sku ? catalog.bySku.get(sku) : undefined;
  if (!sku || !deposit) return undefined;
  const d = deposit.product;
  const rate = context.taxRates[d.taxCategory];
  if (rate === undefined) return { error: { sku, type: 'no_tax_rate', message: `no tax rate for the tax category "${d.taxCategory}" of the deposit ${sku}` } };
  const resolved = resolvePrice(deposit.prices, { categories: context.categories, at: context.at, quantity: line.amount, loyaltyCard: context.loyaltyCard, currency: context.currency });
  if (!resolved) return { error: { sku, type: 'no_price', message: `the deposit ${sku} has no price in this shop` } };
  return {
    id: `${line.id}-deposit`,
    type: 'deposit',
    refersTo: line.id,
    sku,
    amount: line.amount,
    weight: 0,
    units: 0,
    price: resolved.unitPrice,
    priceOrigin: 'master',
    totalPrice: resolved.unitPrice * line.amount,
    name: d.name,
    taxRate: rate,
    scannedCode: '',
    saleRestriction: '',
  };
}
