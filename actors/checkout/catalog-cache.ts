import type { CatalogEntry } from '../../src/domain/cart.js';
import type { CartKeys, CheckoutData, VersionedCheckoutData } from './sql.js';

/**
 * What a checkout worker remembers of the catalog: per project and shop, exactly what the checkout
 * statement (sql.ts) returned for earlier carts, and the keys it found nothing for, all read at one
 * catalog version of the project (migrations/0005_catalog_versions.sql).
 *
 * A cart is priced from memory only when the project's current version is the one remembered and
 * every key of the cart (SKUs, codes, PLUs, and the deposit products of what they name) has a
 * remembered answer: then the statement would return the same rows. Anything else reads the
 * database. Memory is never partly evicted (a product without its deposit would price wrong): past
 * `maxEntries` it is dropped whole.
 */
export class CheckoutCatalogCache {
  private readonly projects = new Map<string, ProjectMemory>();
  private entries = 0;

  /** `maxEntries` 0 remembers nothing. */
  constructor(private readonly maxEntries: number) {}

  /** False when the bound is 0: nothing is remembered, so asking for versions would be wasted. */
  get enabled(): boolean {
    return this.maxEntries > 0;
  }

  /** The checkout data of a cart at `version`, when every key of it is remembered at that version. */
  lookup(project: string, shopId: string, version: string, keys: CartKeys): CheckoutData | undefined {
    const memory = this.projects.get(project);
    if (memory?.version !== version) return undefined;
    const shop = memory.shops.get(shopId);
    if (!shop) return undefined;
    for (const sku of keys.skus) if (!shop.knowsSku(sku)) return undefined;
    for (const code of keys.codes) if (!shop.knowsCode(code)) return undefined;
    for (const plu of keys.plus) if (!shop.knowsPlu(plu)) return undefined;
    return shop.data;
  }

  /** Remembers what the checkout statement returned for `keys`. */
  remember(project: string, shopId: string, keys: CartKeys, read: VersionedCheckoutData): void {
    if (!this.enabled) return;
    this.add(project, shopId, keys, read);
    if (this.entries <= this.maxEntries) return;
    // Past the bound: start over with this read alone (or with nothing, if it alone is too much).
    this.clear();
    this.add(project, shopId, keys, read);
    if (this.entries > this.maxEntries) this.clear();
  }

  /** Entries remembered, over all projects and shops. */
  get size(): number {
    return this.entries;
  }

  clear(): void {
    this.projects.clear();
    this.entries = 0;
  }

  private add(project: string, shopId: string, keys: CartKeys, read: VersionedCheckoutData): void {
    let memory = this.projects.get(project);
    if (memory?.version !== read.version) {
      if (memory) this.entries -= entriesOf(memory);
      memory = { version: read.version, shops: new Map() };
      this.projects.set(project, memory);
    }
    let shop = memory.shops.get(shopId);
    if (!shop) {
      shop = new ShopMemory(read);
      memory.shops.set(shopId, shop);
    }
    this.entries += shop.add(keys, read);
  }
}

interface ProjectMemory {
  version: string;
  shops: Map<string, ShopMemory>;
}

function entriesOf(memory: ProjectMemory): number {
  let sum = 0;
  for (const shop of memory.shops.values()) sum += shop.entries;
  return sum;
}

/** One shop's view of the catalog: its pricing categories decide which prices an entry holds. */
class ShopMemory {
  readonly data: CheckoutData;
  private readonly bySku = new Map<string, CatalogEntry>();
  private readonly skuOfCode = new Map<string, string>();
  private readonly skuOfPlu = new Map<string, string>();
  private readonly absentSkus = new Set<string>();
  private readonly absentCodes = new Set<string>();
  private readonly absentPlus = new Set<string>();

  constructor(read: CheckoutData) {
    this.data = {
      ...(read.shop ? { shop: read.shop } : {}),
      ...(read.promotion ? { promotion: read.promotion } : {}),
      settings: read.settings,
      categories: read.categories,
      catalog: { bySku: this.bySku, skuOfCode: this.skuOfCode, skuOfPlu: this.skuOfPlu },
    };
  }

  /** Adds a read's answers for `keys`; returns how many entries are new. */
  add(keys: CartKeys, read: CheckoutData): number {
    const before = this.entries;
    const { bySku, skuOfCode, skuOfPlu } = read.catalog;
    for (const [sku, entry] of bySku) {
      this.bySku.set(sku, entry);
      this.absentSkus.delete(sku);
    }
    const found = (sku: string | undefined) => {
      if (sku === undefined) return;
      // The statement reads the deposit products of what the keys found: one it did not return
      // does not exist. (A deposit product's own deposit is not read; it stays unknown.)
      const deposit = bySku.get(sku)?.product.depositProduct;
      if (deposit && !bySku.has(deposit)) this.absentSkus.add(deposit);
    };
    for (const sku of keys.skus) {
      if (bySku.has(sku)) found(sku);
      else this.absentSkus.add(sku);
    }
    for (const code of keys.codes) {
      const sku = skuOfCode.get(code);
      if (sku === undefined) this.absentCodes.add(code);
      else this.skuOfCode.set(code, sku);
      found(sku);
    }
    for (const plu of keys.plus) {
      const sku = skuOfPlu.get(plu);
      if (sku === undefined) this.absentPlus.add(plu);
      else this.skuOfPlu.set(plu, sku);
      found(sku);
    }
    return this.entries - before;
  }

  get entries(): number {
    return this.bySku.size + this.skuOfCode.size + this.skuOfPlu.size + this.absentSkus.size + this.absentCodes.size + this.absentPlus.size;
  }

  knowsSku(sku: string): boolean {
    const entry = this.bySku.get(sku);
    if (!entry) return this.absentSkus.has(sku);
    const deposit = entry.product.depositProduct;
    return !deposit || this.bySku.has(deposit) || this.absentSkus.has(deposit);
  }

  knowsCode(code: string): boolean {
    const sku = this.skuOfCode.get(code);
    return sku === undefined ? this.absentCodes.has(code) : this.knowsSku(sku);
  }

  knowsPlu(plu: string): boolean {
    const sku = this.skuOfPlu.get(plu);
    return sku === undefined ? this.absentPlus.has(plu) : this.knowsSku(sku);
  }
}
