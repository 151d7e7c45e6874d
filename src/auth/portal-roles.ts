import type { PortalRole } from '../../subjects/portal-accounts.js';
import { Permissions, type Permission } from './permissions.js';

/**
 * What each portal role may do, as the API's permissions: a signed-in session is a principal with
 * exactly these, so the portal can do nothing a bearer token with the same list could not. The
 * table is documented in docs/portal.md, "Accounts and roles".
 *
 * - owner: everything, and the only role with `projectsWrite` (settings, PoS credentials, accounts).
 * - backoffice: catalog, prices, shops, orders and receipts, coupons, promotions.
 * - supervisor: the shop floor: the checkout processes of a shop, approving them or refusing the
 *   purchase (the payment fails). Aborting is the customer's own act, so the role has no productsRead.
 * - accounting: orders and receipts, closings (reports, logs, schedules).
 */
export const PortalRolePermissions: Readonly<Record<PortalRole, readonly Permission[]>> = {
  owner: Permissions,
  backoffice: [
    'productsRead',
    'productsWrite',
    'availabilitiesRead',
    'availabilitiesWrite',
    'pricingRead',
    'pricingWrite',
    'pricingCategoriesRead',
    'pricingCategoriesWrite',
    'shopsRead',
    'shopsWrite',
    'ordersRead',
    'couponsRead',
    'couponsWrite',
    'promotionsRead',
    'promotionsWrite',
    'checkoutRead',
    'fulfillmentsRead',
  ],
  supervisor: ['shopsRead', 'checkoutRead', 'supervisor', 'setPaymentState'],
  accounting: ['shopsRead', 'ordersRead', 'closingsRead', 'closingsWrite'],
};
