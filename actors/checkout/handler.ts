import { priceCart } from '../../src/domain/cart.js';
import { signCheckoutInfo } from '../../src/domain/signature.js';
import { AppError } from '../../src/errors.js';
import type { Sql } from '../../src/infra/postgres.js';
import { route, type Route } from '../../src/messaging/worker.js';
import { checkout, checkoutProcessPath, type Cart, type CartEntry, type CartItem, type CheckoutInfo, type Violation } from '../../subjects/checkout.js';
import { CheckoutCatalogCache } from './catalog-cache.js';
import { CatalogVersions } from './catalog-versions.js';
import { cartKeys, loadCheckoutData, type CheckoutData } from './sql.js';

export interface CheckoutDeps {
  sql: Sql;
  /** The key checkout infos are signed with (and verified with when a process is created). */
  signingKey: Uint8Array;
  /** How many products, codes and PLUs a worker process remembers (0: none; see catalog-cache.ts). */
  cacheMaxEntries: number;
  /** Whether a fulfillment service is configured (FULFILLMENT_URL): products with a fulfillmentType need one. */
  fulfillmentAvailable: boolean;
}

/** The checkout workers: price a cart into a signed checkout info. */
export function createCheckoutActor(deps: CheckoutDeps): Route[] {
  const { sql, signingKey } = deps;
  const cache = new CheckoutCatalogCache(deps.cacheMaxEntries);
  const versions = new CatalogVersions(sql);

  /** The cart's catalog data: from memory when it is current, else read (and remembered). */
  async function checkoutData(project: string, cart: Cart, items: readonly CartItem[]): Promise<CheckoutData> {
    const keys = cartKeys(items);
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
      const { products, violations } = sortCartItems(cart.items);
      const { shop, settings, categories, catalog } = await checkoutData(project, cart, products);
      if (!shop) throw new AppError(404, 'shop_not_found', `no shop with id ${cart.shopID}`);

      const at = new Date();
      const pricing = priceCart(products, catalog, {
        categories,
        taxRates: settings.taxRates,
        currency: settings.currency,
        at,
        loyaltyCard: Boolean(cart.customer?.loyaltyCard),
        deviceType: cart.deviceType,
        fulfillmentAvailable: deps.fulfillmentAvailable,
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
        paymentMethods: settings.paymentMethods.map((id) => ({ id })),
        lineItems: pricing.lineItems,
        price: pricing.price,
        currency: settings.currency,
        requiredInformation: cart.requiredInformation,
        violations,
      };
      return { checkoutInfo, signature: signCheckoutInfo(checkoutInfo, signingKey), links: { checkoutProcess: { href: checkoutProcessPath(project) } } };
    }),
  ];
}

/**
 * The product items of a cart, and the violations of the rest: coupons are recognised once the
 * project has coupons (until then each is `coupon_invalid`); deposit return vouchers are not
 * redeemed by this platform. Neither ever refuses the cart.
 */
function sortCartItems(items: readonly CartEntry[]): { products: CartItem[]; violations: Violation[] } {
  const products: CartItem[] = [];
  const violations: Violation[] = [];
  items.forEach((item, index) => {
    const refersTo = item.id ?? String(index + 1);
    if (item.kind === 'product') products.push(item.id === undefined ? { ...item, id: refersTo } : item);
    else if (item.kind === 'coupon') violations.push({ type: 'coupon_invalid', message: `coupon ${item.couponID} is not known`, refersTo });
    else violations.push({ type: 'invalid_line_item', message: 'deposit return vouchers are not redeemed here: hand it in at the cashier', refersTo });
  });
  return { products, violations };
}
