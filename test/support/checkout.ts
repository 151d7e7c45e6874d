import type { TestService } from './service.js';
import { TestProject } from './service.js';

/**
 * A small shop for the checkout process tests: settings, one shop, a few priced products (one
 * age-restricted, one with forceControl), and helpers for the steps of a checkout.
 */
export const p = `/${TestProject}`;

export interface CheckoutFixture {
  /** A signed checkout info for a cart of `items` (default: 2 × WATER) in shop s1. */
  signedInfo(items?: object[], extra?: object): Promise<any>;
  /** POST /checkout/process with a fresh checkout info; answers the response. */
  createProcess(options?: { items?: object[]; paymentMethod?: string }): Promise<any>;
  tokens: Record<'customer' | 'reader' | 'payment' | 'pricing' | 'supervisor' | 'orders', string>;
}

export async function seedCheckout(svc: TestService): Promise<CheckoutFixture> {
  const admin = await svc.token(['productsWrite', 'pricingWrite', 'shopsWrite', 'projectsWrite']);
  const tokens = {
    customer: await svc.token(['productsRead']),
    reader: await svc.token(['checkoutRead']),
    payment: await svc.token(['setPaymentState']),
    pricing: await svc.token(['updatePricingCheckoutProcess']),
    supervisor: await svc.token(['supervisor']),
    orders: await svc.token(['ordersRead']),
  };
  await svc.request('PUT', `${p}/settings`, { token: admin, body: { currency: 'EUR', taxRates: { normal: '19', reduced: '7' }, paymentMethods: ['cash', 'girocard'] } });
  await svc.request('POST', `${p}/shops`, { token: admin, body: { id: 's1', name: 'Shop 1', externalId: 'E-1', city: 'Berlin', street: 'Torstraße 1' } });
  await svc.request('POST', `${p}/shops`, { token: admin, body: { id: 's2', name: 'Shop 2', externalId: 'E-2' } });
  const products = [
    { sku: 'WATER', name: 'Wasser', taxCategory: 'normal' },
    { sku: 'BREAD', name: 'Brot', taxCategory: 'reduced' },
    { sku: 'WINE', name: 'Rotwein', taxCategory: 'normal', saleRestriction: 'min_age_18' },
    { sku: 'RAZOR', name: 'Rasierklingen', taxCategory: 'normal', forceControl: true },
  ];
  const prices = [
    { sku: 'WATER', category: 'default', prices: [{ price: '0.99', currency: 'EUR', tier: 'list' }] },
    { sku: 'BREAD', category: 'default', prices: [{ price: '2.49', currency: 'EUR', tier: 'list' }] },
    { sku: 'WINE', category: 'default', prices: [{ price: '5.99', currency: 'EUR', tier: 'list' }] },
    { sku: 'RAZOR', category: 'default', prices: [{ price: '12.99', currency: 'EUR', tier: 'list' }] },
  ];
  const ndjson = (items: object[]) => ({ raw: items.map((i) => JSON.stringify(i)).join('\n'), headers: { 'content-type': 'application/x-ndjson' } });
  await svc.request('POST', `${p}/products/_batch`, { token: admin, ...ndjson(products) });
  await svc.request('POST', `${p}/pricing/v2/category/batch`, { token: admin, ...ndjson(prices) });

  const signedInfo = async (items: object[] = [{ sku: 'WATER', amount: 2 }], extra: object = {}) => {
    const res = await svc.request('POST', `${p}/checkout/info`, { token: tokens.customer, body: { shopID: 's1', session: 'sess', clientID: 'phone', appUserID: 'user', items, ...extra } });
    if (res.status !== 200) throw new Error(`checkout info failed: ${res.status} ${res.text}`);
    return res.body;
  };
  return {
    tokens,
    signedInfo,
    async createProcess(options = {}) {
      const signedCheckoutInfo = await signedInfo(options.items);
      return svc.request('POST', `${p}/checkout/process`, { token: tokens.customer, body: { signedCheckoutInfo, paymentMethod: options.paymentMethod ?? 'cash' } });
    },
  };
}
