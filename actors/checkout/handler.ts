import { CompiledConfigurations } from '../../src/domain/promotions/index.js';
import { signedCheckoutInfoText } from '../../src/domain/signature.js';
import { AppError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import type { Sql } from '../../src/infra/postgres.js';
import { JsonText, route, type Route } from '../../src/messaging/worker.js';
import { checkout, checkoutProcessPath, type Cart, type SignedCheckoutInfo } from '../../subjects/checkout.js';
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

  /** The cart's catalog data (with the active promotion configuration): from memory when it is current, else read (and remembered). */
  async function checkoutData(project: string, cart: Cart): Promise<CheckoutData> {
    const keys = cartKeys(sortCartItems(cart.items).products);
    if (cache.enabled) {
      const remembered = cache.lookup(project, cart.shopID, await versions.current(project), keys);
      if (remembered) return remembered;
    }
    const read = await loadCheckoutData(sql, project, cart.shopID, keys);
    cache.remember(project, cart.shopID, keys, read);
    return read;
  }

  return [
    route(checkout.info, async ({ project, ...cart }) => {
      const data = await checkoutData(project, cart);
      const { info } = await priceCheckout(pricing, project, cart, data, data.promotion);
      // The canonical text the signature covers is JSON: the reply is written around it, not serialized again.
      const { canonical, signature } = signedCheckoutInfoText(info, signingKey);
      const links = { checkoutProcess: { href: checkoutProcessPath(project) } };
      return new JsonText<SignedCheckoutInfo>(`{"checkoutInfo":${canonical},"signature":${JSON.stringify(signature)},"links":${JSON.stringify(links)}}`);
    }),

    route(checkout.evaluate, async ({ project, configID, ...cart }) => {
      const [data, row] = await Promise.all([checkoutData(project, cart), findConfiguration(sql, project, configID)]);
      if (!row) throw AppError.notFound(`no promotion configuration with id ${configID}`);
      const promotion = { id: row.id, version: row.version, body: { rounding: row.rounding, ranks: row.ranks, groups: row.groups } };
      const { info, explanation } = await priceCheckout(pricing, project, cart, data, promotion);
      return { checkoutInfo: info, rules: explanation };
    }),
  ];
}
