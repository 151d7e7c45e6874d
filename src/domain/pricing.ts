/**
 * Price resolution: the price of one product in one shop, for a counted quantity at a moment.
 * Pure: the caller loads the product's prices and the shop's categories.
 *
 * The rules (design.md, "Money, prices and taxes", made precise here):
 * 1. Categories are tried in the shop's order: its pricing categories by descending priority (ties
 *    by id), then `default`.
 * 2. Pricing v2 wins over legacy: when any of those categories has a v2 price that applies now, the
 *    first such category gives the price and legacy prices are not looked at.
 * 3. In a v2 category the entries in the project's currency, of tier `list` or `discount`, valid at
 *    the moment (validFrom inclusive, validTo exclusive) apply. Entries of one tier and quantity
 *    form a group in which the entry with the latest validFrom wins (no validFrom is the oldest),
 *    so a scheduled price change supersedes the standing price. The unit price is the lowest of the
 *    groups whose quantity is at most the counted quantity (a quantity price applies from that many
 *    counted units on). A category whose applicable entries all need a larger quantity gives no
 *    price, and the next category is tried.
 * 4. The list price is the winning `list` entry of quantity 1 (or the unit price when there is none).
 * 5. Legacy: the first category with a legacy price gives list price, discounted price, and the
 *    customer-card price when the cart carries a loyalty card; the unit price is the lowest of them.
 *    A discounted or customer-card price of 0 means "none", never "free".
 * Other v2 tiers are stored and shown, but do not price a sale.
 */

export const DefaultCategory = 'default';

export interface PriceV2 {
  /** In the currency's subunit. */
  amount: number;
  currency: string;
  tier: string;
  /** From how many counted units on the price applies; 1 for a plain price. */
  quantity: number;
  /** Epoch milliseconds (the loader converts the stored ISO text once, not on every resolution). */
  validFrom?: number;
  validTo?: number;
  basePrice?: string;
}

export interface LegacyPrice {
  listPrice: number;
  discountedPrice?: number | null;
  customerCardPrice?: number | null;
  basePrice?: string | null;
}

export interface ProductPrices {
  /** v2 prices per category id. */
  v2: ReadonlyMap<string, readonly PriceV2[]>;
  /** Legacy prices per category id. */
  legacy: ReadonlyMap<string, LegacyPrice>;
}

export interface PriceQuery {
  /** The shop's categories in the order to try them, `default` last (see shopCategoryOrder). */
  categories: readonly string[];
  at: Date;
  /** The counted quantity for quantity prices (per quantityPriceKey, else per SKU). */
  quantity: number;
  loyaltyCard: boolean;
  /** The project's currency; prices in other currencies do not apply. */
  currency: string;
}

export interface ResolvedPrice {
  unitPrice: number;
  listPrice: number;
  source: 'v2' | 'legacy';
  category: string;
  basePrice: string | undefined;
}

const SellingTiers = new Set(['list', 'discount']);

export function resolvePrice(prices: ProductPrices, query: PriceQuery): ResolvedPrice | undefined {
  for (const category of query.categories) {
    const entries = prices.v2.get(category);
    const resolved = entries && resolveV2(entries, query, category);
    if (resolved) return resolved;
  }
  for (const category of query.categories) {
    const price = prices.legacy.get(category);
    if (price) return resolveLegacy(price, query.loyaltyCard, category);
  }
  return undefined;
}

/** The shop's categories by descending priority (ties by id), then `default`. */
export function shopCategoryOrder(categories: ReadonlyArray<{ id: string; priority: number }>): string[] {
  const ordered = [...categories]
    .filter((c) => c.id !== DefaultCategory)
    .sort((a, b) => b.priority - a.priority || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((c) => c.id);
  return [...ordered, DefaultCategory];
}

export function isValidAt(entry: Pick<PriceV2, 'validFrom' | 'validTo'>, at: Date): boolean {
  const t = at.getTime();
  return (entry.validFrom === undefined || entry.validFrom <= t) && (entry.validTo === undefined || t < entry.validTo);
}

function resolveV2(entries: readonly PriceV2[], query: PriceQuery, category: string): ResolvedPrice | undefined {
  // The winning entry of each (tier, quantity) group.
  const groups = new Map<string, PriceV2>();
  for (const entry of entries) {
    if (entry.currency !== query.currency || !SellingTiers.has(entry.tier) || !isValidAt(entry, query.at)) continue;
    const key = `${entry.tier}\u0000${entry.quantity}`;
    const current = groups.get(key);
    if (!current || supersedes(entry, current)) groups.set(key, entry);
  }
  let best: PriceV2 | undefined;
  for (const entry of groups.values()) {
    if (entry.quantity <= query.quantity && (!best || entry.amount < best.amount)) best = entry;
  }
  if (!best) return undefined;
  const list = groups.get(`list\u00001`);
  const basePrice = list?.basePrice ?? best.basePrice;
  return { unitPrice: best.amount, listPrice: list?.amount ?? best.amount, source: 'v2', category, basePrice };
}

/** A later validFrom wins; between equals, the lower amount, so that input order never matters. */
function supersedes(entry: PriceV2, current: PriceV2): boolean {
  const a = entry.validFrom ?? -Infinity;
  const b = current.validFrom ?? -Infinity;
  return a > b || (a === b && entry.amount < current.amount);
}

function resolveLegacy(price: LegacyPrice, loyaltyCard: boolean, category: string): ResolvedPrice {
  let unitPrice = price.listPrice;
  if (price.discountedPrice) unitPrice = Math.min(unitPrice, price.discountedPrice);
  if (loyaltyCard && price.customerCardPrice) unitPrice = Math.min(unitPrice, price.customerCardPrice);
  return { unitPrice, listPrice: price.listPrice, source: 'legacy', category, basePrice: price.basePrice ?? undefined };
}
