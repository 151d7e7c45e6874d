import { priceCart } from '../../src/domain/cart.js';
import { interpretCode } from '../../src/domain/codes.js';
import { signCheckoutInfo } from '../../src/domain/signature.js';
import { AppError } from '../../src/errors.js';
import type { Sql } from '../../src/infra/postgres.js';
import { route, type Route } from '../../src/messaging/worker.js';
import { checkout, checkoutProcessPath, type Cart, type CheckoutInfo } from '../../subjects/checkout.js';
import { loadCheckoutData, type CartKeys } from './sql.js';

export interface CheckoutDeps {
  sql: Sql;
  /** The key checkout infos are signed with (and verified with when a process is created). */
  signingKey: Uint8Array;
}

/** The checkout workers: price a cart into a signed checkout info. */
export function createCheckoutActor(deps: CheckoutDeps): Route[] {
  const { sql, signingKey } = deps;
  return [
    route(checkout.info, async ({ project, ...cart }) => {
      const { shop, settings, categories, catalog } = await loadCheckoutData(sql, project, cart.shopID, cartKeys(cart));
      if (!shop) throw new AppError(404, 'shop_not_found', `no shop with id ${cart.shopID}`);

      const at = new Date();
      const pricing = priceCart(cart.items, catalog, {
        categories,
        taxRates: settings.taxRates,
        currency: settings.currency,
        at,
        loyaltyCard: Boolean(cart.customer?.loyaltyCard),
        deviceType: cart.deviceType,
      });
      if (!pricing.ok) {
        throw new AppError(400, 'invalid_cart_item', `${pricing.errors.length} cart item(s) cannot be sold`, pricing.errors);
      }
      if (!settings.paymentMethods.length) throw new AppError(400, 'no_available_method', 'no payment method is available for this checkout');

      const checkoutInfo: CheckoutInfo = {
        session: cart.session ?? '',
        clientID: cart.clientID ?? '',
        appUserID: cart.appUserID ?? '',
        shopID: cart.shopID,
        project,
        shop,
        customer: cart.customer ?? {},
        createdAt: at.toISOString(),
        availableMethods: settings.paymentMethods,
        lineItems: pricing.lineItems,
        price: pricing.price,
        currency: settings.currency,
      };
      return { checkoutInfo, signature: signCheckoutInfo(checkoutInfo, signingKey), links: { checkoutProcess: { href: checkoutProcessPath(project) } } };
    }),
  ];
}

/** The keys a cart's items are looked up by: SKUs, scanned codes, and the PLUs a code may carry. */
function cartKeys(cart: Cart): CartKeys {
  const keys: CartKeys = { skus: [], codes: [], plus: [] };
  for (const item of cart.items) {
    if (item.sku !== undefined) keys.skus.push(item.sku);
    if (item.scannedCode === undefined) continue;
    keys.codes.push(item.scannedCode);
    const interpreted = interpretCode(item.scannedCode);
    if (interpreted.kind === 'instore' || interpreted.kind === 'plu') keys.plus.push(...interpreted.plus);
  }
  return keys;
}
