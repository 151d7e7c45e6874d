import { z } from 'zod';

/**
 * Every permission a token can carry: the spec's names plus the ones design.md adds. A token lists
 * them one by one; there is no wildcard (the token CLI's `all` expands to this whole list). Here in
 * the contract because the contract carries them too: a service client's permissions, a token's
 * grant.
 */
export const Permissions = [
  'productsRead',
  'productsWrite',
  'availabilitiesRead',
  'availabilitiesWrite',
  'pricingRead',
  'pricingWrite',
  'pricingCategoriesRead',
  'pricingCategoriesWrite',
  'checkoutRead',
  'supervisor',
  'setPaymentState',
  'updatePricingCheckoutProcess',
  'shopsRead',
  'shopsWrite',
  'ordersRead',
  'closingsRead',
  'closingsWrite',
  'couponsRead',
  'couponsWrite',
  'promotionsRead',
  'promotionsWrite',
  'projectsWrite',
  'fulfillmentsRead',
  'fulfillmentsWrite',
] as const;

export type Permission = (typeof Permissions)[number];

export const PermissionName = z.enum(Permissions).describe('A permission name');
