import { CompiledConfigurations } from '../../src/domain/promotions/index.js';
import { signedCheckoutInfoJson } from '../../src/domain/signature.js';
import { AppError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import type { Sql } from '../../src/infra/postgres.js';
import { JsonText, route, type Route } from '../../src/messaging/worker.js';
import { checkout, checkoutProcessPath, type CartItem, type SignedCheckoutInfo } from '../../subjects/checkout.js';
import { findConfiguration } from '../promotions/sql.js';
import { CheckoutCatalogCache } from './catalog-cache.js';
import { CatalogVersions } from './catalog-versions.js';
import { priceCheckout, sortCartItems } from './pricing.js';
import { cartKeys, loadCheckoutData, type CheckoutData } from './sql.js';

export interface CheckoutDeps {
  sql: Sql;
  log: Logger;
  /** The key checkout infos are signed with (and verified with when a process is created). */
  signingKey: Uint8Array;
  /** How many products, codes and PLUs a worker process remembers (0: none; see catalog-cache.ts). */
  cacheMaxEntries: number;
  /** Whether a fulfillment service is configured (FULFILLMENT_URL): products with a fulfillmentType need one. */
  fulfillmentAvailable: boolean;
}

/** The checkout workers: price a cart into a signed checkout info (pricing.ts), or evaluate a promotion configuration with it. */
export function createCheckoutActor(deps: CheckoutDeps): Route[] {
  const { sql, signingKey } = deps;
  const cache = new CheckoutCatalogCache(deps.cacheMaxEntries);
  const versions = new CatalogVersions(sql);
  const pricing = { sql, log: deps.log, compiled: new CompiledConfigurations(), fulfillmentAvailable: deps.fulfillmentAvailable };

  /** The catalog data of a cart's product items (with the active promotion configuration): from memory when it is current, else read (and remembered). */
  async function checkoutData(project: string, shopID: string, products: readonly CartItem[]): Promise<CheckoutData> {
    const keys = cartKeys(products);
    if (cache.enabled) {
      const remembered = cache.lookup(project, shopID, await versions.current(project), keys);
      if (remembered) return remembered;
    }
    const read = await loadCheckoutData(sql, project, shopID, keys);
    cache.remember(project, shopID, keys, read);
    return read;
  }

  return [
    route(checkout.info, async ({ project, ...cart }) => {
      // Sorted once: the product items name the catalog data to read, and are priced.
      const items = sortCartItems(cart.items);
      const data = await checkoutData(project, cart.shopID, items.products);
      const { info } = await priceCheckout(pricing, project, cart, items, data, data.promotion);
      // The canonical JSON the signature covers is the reply's checkoutInfo: the reply is written around it.
      const links = { checkoutProcess: { href: checkoutProcessPath(project) } };
      return new JsonText<SignedCheckoutInfo>(signedCheckoutInfoJson(info, signingKey, links));
    }),

    route(checkout.evaluate, async ({ project, configID, ...cart }) => {
      const items = sortCartItems(cart.items);
      const [data, row] = await Promise.all([checkoutData(project, cart.shopID, items.products), findConfiguration(sql, project, configID)]);
      if (!row) throw AppError.notFound(`no promotion configuration with id ${configID}`);
      const promotion = { id: row.id, version: row.version, body: { rounding: row.rounding, ranks: row.ranks, groups: row.groups } };
      const { info, explanation } = await priceCheckout(pricing, project, cart, items, data, promotion, { explain: true });
      return { checkoutInfo: info, rules: explanation };
    }),
  ];
}
