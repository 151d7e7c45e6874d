import { fillWords, useLanguage, type Language } from './i18n.js';

/**
 * The API's codes (roles, order and payment states, payment methods, availabilities, check types,
 * sale restrictions) in words of the chosen language. The API's enumerations are open: a code the portal
 * does not know yet is shown as given.
 */
type Table = Record<string, string>;

interface Names {
  roles: Table;
  orderStates: Table;
  paymentStates: Table;
  paymentMethods: Table;
  availabilities: Table;
  checkTypes: Table;
  /** A min_age check with its age. */
  ageCheckFrom: string;
  /** A min_age_<age> sale restriction. */
  restrictedFrom: string;
}

const words: Record<Language, Names> = {
  de: {
    roles: { owner: 'Inhaber', backoffice: 'Backoffice', supervisor: 'Aufsicht', accounting: 'Buchhaltung' },
    orderStates: { final: 'abgeschlossen', userAborted: 'vom Kunden abgebrochen', paymentFailed: 'Zahlung fehlgeschlagen' },
    paymentStates: { pending: 'offen', processing: 'wird bezahlt', transferred: 'an Zahlungssystem übergeben', successful: 'bezahlt', failed: 'fehlgeschlagen' },
    paymentMethods: {
      cash: 'Bargeld', girocard: 'girocard', deDirectDebit: 'SEPA-Lastschrift', creditCardVisa: 'Visa', creditCardMastercard: 'Mastercard', creditCardAmericanExpress: 'American Express',
      qrCodePOS: 'An der Kasse (QR-Code)', qrCodeOffline: 'An der Kasse (QR-Code, offline)', customerCardPOS: 'Kundenkarte an der Kasse', gatekeeperTerminal: 'Terminal am Ausgang',
      externalBilling: 'Externe Abrechnung', applePay: 'Apple Pay', googlePay: 'Google Pay', twint: 'TWINT', postFinanceCard: 'PostFinance Card', paydirekt: 'paydirekt',
    },
    availabilities: { inStock: 'vorrätig', listed: 'gelistet', notAvailable: 'nicht verfügbar' },
    checkTypes: { min_age: 'Alterskontrolle', supervisor_approval: 'Kontrolle' },
    ageCheckFrom: 'Alterskontrolle ab {age}',
    restrictedFrom: 'ab {age} Jahren',
  },
  en: {
    roles: { owner: 'Owner', backoffice: 'Back office', supervisor: 'Supervisor', accounting: 'Accounting' },
    orderStates: { final: 'completed', userAborted: 'cancelled by the customer', paymentFailed: 'payment failed' },
    paymentStates: { pending: 'open', processing: 'being paid', transferred: 'handed to a payment system', successful: 'paid', failed: 'failed' },
    paymentMethods: {
      cash: 'Cash', girocard: 'girocard', deDirectDebit: 'SEPA direct debit', creditCardVisa: 'Visa', creditCardMastercard: 'Mastercard', creditCardAmericanExpress: 'American Express',
      qrCodePOS: 'At the till (QR code)', qrCodeOffline: 'At the till (QR code, offline)', customerCardPOS: 'Customer card at the till', gatekeeperTerminal: 'Terminal at the exit',
      externalBilling: 'External billing', applePay: 'Apple Pay', googlePay: 'Google Pay', twint: 'TWINT', postFinanceCard: 'PostFinance Card', paydirekt: 'paydirekt',
    },
    availabilities: { inStock: 'in stock', listed: 'listed', notAvailable: 'not available' },
    checkTypes: { min_age: 'Age check', supervisor_approval: 'Control' },
    ageCheckFrom: 'Age check {age}+',
    restrictedFrom: '{age}+ only',
  },
};

/** A code's words in the table, else the code itself. */
export const named = (table: Table, code: string) => (Object.hasOwn(table, code) ? table[code]! : code);

const MinAge = /^min_age_(\d+)$/;

export function useNames() {
  const n = words[useLanguage()];
  return {
    role: (code: string) => named(n.roles, code),
    orderState: (code: string) => named(n.orderStates, code),
    paymentState: (code: string) => named(n.paymentStates, code),
    paymentMethod: (code: string) => named(n.paymentMethods, code),
    availability: (code: string) => named(n.availabilities, code),
    /** What must be checked: "Alterskontrolle ab 18", "Kontrolle". */
    check: (check: { type: string; requiredAge?: number | undefined }) =>
      check.type === 'min_age' && check.requiredAge !== undefined ? fillWords(n.ageCheckFrom, { age: check.requiredAge }) : named(n.checkTypes, check.type),
    /** A product's sale restriction ("min_age_18": "ab 18 Jahren"); empty for none. */
    saleRestriction(code: string | null | undefined): string {
      if (!code || code === 'none') return '';
      const age = MinAge.exec(code)?.[1];
      return age ? fillWords(n.restrictedFrom, { age }) : code;
    },
  };
}
