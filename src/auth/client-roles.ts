import type { Permission } from './permissions.js';

/**
 * The role `retailerApp`: what a customer app's calls need, and nothing more (docs/api.md, "The
 * role retailerApp"). An app user's token carries these and its `appUserID` claim:
 *
 * - `shopsRead`: the shop list and a shop;
 * - `productsRead`: products and codes, the checkout info, creating its checkout process and
 *   aborting it;
 * - `checkoutRead`: reading a checkout process by its id (unguessable: knowing it is part of the
 *   permission, as the spec says);
 * - `couponsRead`: the project's coupons and their images.
 *
 * Its own orders and receipts it reads by its `appUserID` claim, never by `ordersRead`, so another
 * user's are refused. No write to the catalog, prices, shops or settings; no supervisor or payment
 * permission.
 */
export const RetailerAppRole = 'retailerApp';

export const RetailerAppPermissions: readonly Permission[] = ['shopsRead', 'productsRead', 'checkoutRead', 'couponsRead'];
