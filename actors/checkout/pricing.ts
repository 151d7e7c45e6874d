import { priceCart } from '../../src/domain/cart.js';
import { candidateKeys, checkCoupons, couponLine, type AcceptedCoupon, type CouponCartItem } from '../../src/domain/coupons/cart.js';
import { applyPromotions, PromotionConfigurationError, type ApplyOptions, type CompiledConfigurations, type RuleExplanation } from '../../src/domain/promotions/index.js';
import type { Price } from '../../src/domain/tax.js';
import { AppError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import type { Sql } from '../../src/infra/postgres.js';
import type { Cart, CartEntry, CartItem, CheckoutInfo, LineItem, LineItemError, Violation } from '../../subjects/checkout.js';
import { findCheckoutCoupons } from '../coupons/sql.js';
import type { ActivePromotion, CheckoutData } from './sql.js';

/**
 * A cart priced into a checkout info (unsigned), in four steps:
 * 1. the product items, priced from the catalog (src/domain/cart.ts); a code-only item that names
 *    no product but a coupon's code is that coupon;
 * 2. the coupon items, checked (src/domain/coupons/cart.ts): violations for those that cannot be used;
 * 3. the promotion configuration (the active one, or the one to evaluate) applied to the priced lines
 *    and the usable coupons (src/domain/promotions);
 * 4. the coupons' own lines (`redeemed` when a rule redeemed them), after the rest.
 * Coupon statements run only for carts that have coupon items or unknown codes.
 */
export interface PricingDeps {
  sql: Sql;
  log: Logger;
  compiled: CompiledConfigurations;
  fulfillmentAvailable: boolean;
}

export interface PricedCheckout {
  info: CheckoutInfo;
  /** With `explain`: per rule of the configuration, whether its condition held and what it granted. */
  explanation: RuleExplanation[];
}

/** `items` are the cart's items as sortCartItems sorts them (the caller sorted them for the catalog keys already). */
export async function priceCheckout(
  deps: PricingDeps,
  project: string,
  cart: Cart,
  items: SortedCartItems,
  data: CheckoutData,
  promotion: ActivePromotion | undefined,
  options: ApplyOptions = {},
): Promise<PricedCheckout> {
  const { shop, settings, categories, catalog } = data;
  if (!shop) throw new AppError(404, 'shop_not_found', `no shop with id ${cart.shopID}`);
  const { products, couponItems, voucherViolations } = items;
  const at = new Date();
  const context = {
    categories,
    taxRates: settings.taxRates,
    currency: settings.currency,
    at,
    loyaltyCard: Boolean(cart.customer?.loyaltyCard),
    deviceType: cart.deviceType,
    fulfillmentAvailable: deps.fulfillmentAvailable,
  };
  let pricing = priceCart(products, catalog, context);

  // Code-only items that name no product may name a coupon.
  const codeOnly = pricing.ok ? [] : codeOnlyItems(products, pricing.errors);
  let accepted: AcceptedCoupon[] = [];
  let couponViolations: Violation[] = [];
  if (couponItems.length || codeOnly.length) {
    const appUserID = cart.appUserID ?? '';
    const codes = [...couponItems.flatMap((i) => (i.couponID === undefined && i.scannedCode ? [i.scannedCode] : [])), ...codeOnly.map((i) => i.scannedCode)];
    const found = await findCheckoutCoupons(deps.sql, project, couponItems.flatMap((i) => (i.couponID ? [i.couponID] : [])), codes, candidateKeys([...couponItems, ...codeOnly], appUserID));
    const couponCodes = new Set(found.flatMap((c) => c.scanned_codes));
    // The code-only items whose code is a coupon's are coupon items, not products.
    const recognisedItems = codeOnly.filter((i) => couponCodes.has(i.scannedCode));
    const recognised = new Set(recognisedItems.map((i) => i.id));
    ({ accepted, violations: couponViolations } = checkCoupons(
      [...couponItems, ...recognisedItems.map(toCouponItem)],
      found.map((c) => ({ id: c.id, doc: c.doc, scannedCodes: c.scanned_codes, redeemedKeys: c.redeemed_keys })),
      { at, appUserID, loyaltyCard: context.loyaltyCard, channel: cart.deviceType === 'app' ? 'app' : 'sco', locale: settings.locale },
    ));
    if (recognised.size) pricing = priceCart(products.filter((p) => !recognised.has(p.id!)), catalog, context);
  }
  if (!pricing.ok) throw new AppError(400, 'invalid_cart_item', `${pricing.errors.length} cart item(s) cannot be sold`, pricing.errors);
  if (!settings.paymentMethods.length) throw new AppError(400, 'no_available_method', 'no payment method is available for this checkout');

  let lineItems: LineItem[] = pricing.lineItems;
  let price: Price = pricing.price;
  let redeemed = new Set<string>();
  let forceControl = false;
  let explanation: RuleExplanation[] = [];
  const compiled = promotion && compile(deps, project, promotion, settings.currency);
  if (promotion && compiled) {
    const result = applyPromotions(
      {
        lineItems,
        // The spec's Product.isDiscountable (default false): only products marked so take discounts.
        discountable: (l) => catalog.bySku.get(l.sku)?.product.isDiscountable ?? false,
        shopExternalId: shop.externalId,
        coupons: accepted.map((c) => ({ id: c.couponID, code: c.code, scannedCode: c.item.scannedCode, refersTo: c.item.refersTo, lineItemId: c.item.id })),
        at,
        currency: settings.currency,
      },
      compiled,
      // The spec's discountID names the discount across configurations: its configuration and rule.
      { ...options, configurationID: promotion.id },
    );
    lineItems = result.lineItems;
    price = result.price;
    redeemed = new Set(result.redeemedCoupons.map((c) => c.lineItemId));
    forceControl = result.forceControl;
    explanation = result.explanation;
  }

  const info: CheckoutInfo = {
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
    lineItems: [...lineItems, ...accepted.map((c) => couponLine(c, redeemed.has(c.item.id)))],
    price,
    currency: settings.currency,
    requiredInformation: cart.requiredInformation,
    violations: [...couponViolations, ...voucherViolations],
    ...(forceControl ? { forceControl: true as const } : {}),
  };
  return { info, explanation };
}

/** A compiled configuration, or none (logged) when it cannot be applied in the project's currency any more. */
function compile(deps: PricingDeps, project: string, promotion: ActivePromotion, currency: string) {
  try {
    return deps.compiled.get(`${project}/${promotion.id}/${promotion.version}`, currency, () => promotion.body);
  } catch (err) {
    if (!(err instanceof PromotionConfigurationError)) throw err;
    deps.log.error({ err, project, configuration: promotion.id }, 'the active promotion configuration cannot be applied; priced without it');
    return undefined;
  }
}

export interface SortedCartItems {
  products: CartItem[];
  couponItems: CouponCartItem[];
  voucherViolations: Violation[];
}

/**
 * The product items of a cart (each with its id: the cart's, or its position), its coupon items,
 * and the violations of its deposit return vouchers (the platform redeems none).
 */
export function sortCartItems(items: readonly CartEntry[]): SortedCartItems {
  const products: CartItem[] = [];
  const couponItems: CouponCartItem[] = [];
  const voucherViolations: Violation[] = [];
  items.forEach((item, index) => {
    const id = item.id ?? String(index + 1);
    if (item.kind === 'product') products.push({ ...item, id });
    else if (item.kind === 'coupon') couponItems.push({ id, couponID: item.couponID, refersTo: item.refersTo, scannedCode: item.scannedCode, amount: item.amount });
    else voucherViolations.push({ type: 'invalid_line_item', message: 'deposit return vouchers are not redeemed here: hand it in at the cashier', refersTo: id });
  });
  return { products, couponItems, voucherViolations };
}

/** A product item with its id, that names no sku but a scanned code. */
type CodeOnlyItem = CartItem & { id: string; scannedCode: string };

/**
 * The items behind product_not_found errors that name no sku but a scanned code (the code may be a
 * coupon's), in the errors' order. An error is about the first product item with its id.
 */
function codeOnlyItems(products: readonly CartItem[], errors: readonly LineItemError[]): CodeOnlyItem[] {
  const notFound = errors.filter((e) => e.type === 'product_not_found');
  if (!notFound.length) return [];
  const byId = new Map<string, CartItem>();
  for (const p of products) if (!byId.has(p.id!)) byId.set(p.id!, p);
  return notFound.flatMap((e) => {
    const item = e.id === undefined ? undefined : byId.get(e.id);
    return item && item.sku === undefined && item.scannedCode !== undefined ? [item as CodeOnlyItem] : [];
  });
}

function toCouponItem(item: CodeOnlyItem): CouponCartItem {
  return { id: item.id, scannedCode: item.scannedCode, amount: item.amount };
}
