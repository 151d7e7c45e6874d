import type { Permission } from '../../../../subjects/formats/permissions.js';
import { useLanguage, type Language } from '../../i18n.js';
import { named } from '../../names.js';

/**
 * What the clients screen shows of the API's clients (GET /clients), and the words for their codes:
 * kinds and permissions. A code the portal does not know is shown as given.
 */
export interface Client {
  id: string;
  name: string;
  kind: string;
  permissions: string[];
  tokenLifetimeSeconds: number;
  createdAt: string;
  rotatedAt?: string;
  previousSecretUntil?: string;
  appUsers?: number;
}

/** A create's or rotate's answer: the secret, given this once. */
export interface CreatedClient extends Client {
  secret: string;
}

/**
 * The permissions a service client may be given, in the order the form lists them (grouped as the
 * API's areas): every permission of the contract (subjects/formats/permissions.ts). One added there
 * and not placed here fails the portal's typecheck (`EveryPermissionListed`), as one without words
 * below does.
 */
export const ServicePermissions = [
  'ordersRead',
  'closingsRead',
  'closingsWrite',
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
  'couponsRead',
  'couponsWrite',
  'promotionsRead',
  'promotionsWrite',
  'checkoutRead',
  'supervisor',
  'setPaymentState',
  'updatePricingCheckoutProcess',
  'fulfillmentsRead',
  'fulfillmentsWrite',
  'projectsWrite',
] as const satisfies readonly Permission[];

type Unlisted = Exclude<Permission, (typeof ServicePermissions)[number]>;
// Fails to compile while a permission of the contract is missing from the form's list.
const EveryPermissionListed: [Unlisted] extends [never] ? true : Unlisted = true;
void EveryPermissionListed;

interface Names {
  kinds: Record<string, string>;
  permissions: Record<Permission, string>;
}

const words: Record<Language, Names> = {
  de: {
    kinds: { app: 'App', service: 'Dienst' },
    permissions: {
      ordersRead: 'Bestellungen und Belege lesen',
      closingsRead: 'Abschlüsse lesen',
      closingsWrite: 'Abschlüsse auslösen und planen',
      productsRead: 'Produkte lesen',
      productsWrite: 'Produkte ändern',
      availabilitiesRead: 'Verfügbarkeiten lesen',
      availabilitiesWrite: 'Verfügbarkeiten ändern',
      pricingRead: 'Preise lesen',
      pricingWrite: 'Preise ändern',
      pricingCategoriesRead: 'Preiskategorien lesen',
      pricingCategoriesWrite: 'Preiskategorien ändern',
      shopsRead: 'Shops lesen',
      shopsWrite: 'Shops ändern',
      couponsRead: 'Gutscheine lesen',
      couponsWrite: 'Gutscheine ändern',
      promotionsRead: 'Aktionen lesen',
      promotionsWrite: 'Aktionen ändern',
      checkoutRead: 'Einkäufe lesen',
      supervisor: 'Einkäufe beaufsichtigen (Alterskontrollen)',
      setPaymentState: 'Zahlungsstatus setzen',
      updatePricingCheckoutProcess: 'Einkäufe an der Kasse neu bepreisen',
      fulfillmentsRead: 'Warenausgaben lesen',
      fulfillmentsWrite: 'Warenausgaben melden',
      projectsWrite: 'Projekt verwalten (Einstellungen, Zugänge)',
    },
  },
  en: {
    kinds: { app: 'App', service: 'Service' },
    permissions: {
      ordersRead: 'Read orders and receipts',
      closingsRead: 'Read closings',
      closingsWrite: 'Start and schedule closings',
      productsRead: 'Read products',
      productsWrite: 'Change products',
      availabilitiesRead: 'Read availabilities',
      availabilitiesWrite: 'Change availabilities',
      pricingRead: 'Read prices',
      pricingWrite: 'Change prices',
      pricingCategoriesRead: 'Read pricing categories',
      pricingCategoriesWrite: 'Change pricing categories',
      shopsRead: 'Read shops',
      shopsWrite: 'Change shops',
      couponsRead: 'Read coupons',
      couponsWrite: 'Change coupons',
      promotionsRead: 'Read promotions',
      promotionsWrite: 'Change promotions',
      checkoutRead: 'Read checkouts',
      supervisor: 'Supervise checkouts (age checks)',
      setPaymentState: 'Set payment states',
      updatePricingCheckoutProcess: 'Reprice checkouts at the till',
      fulfillmentsRead: 'Read fulfillments',
      fulfillmentsWrite: 'Report fulfillments',
      projectsWrite: 'Manage the project (settings, access)',
    },
  },
};

export function useClientNames() {
  const n = words[useLanguage()];
  return {
    kind: (code: string) => named(n.kinds, code),
    permission: (code: string) => named(n.permissions, code),
  };
}
