import { isDecimalRate, rateNumber } from '../closings/order-rates.js';

/** The DSFinV-K codes this platform's orders map to (Anhang C, D and the Stamm_USt keys). */

export interface VatKey {
  key: number;
  /** The rate in percent. */
  rate: number;
  description: string;
}

/** The standard's fixed keys, as vat.csv lists them. */
export const StandardVatKeys: readonly VatKey[] = [
  { key: 1, rate: 19, description: 'Regelsteuersatz' },
  { key: 2, rate: 7, description: 'Ermäßigter Steuersatz' },
  { key: 3, rate: 10.7, description: 'Durchschnittsatz (§ 24 Abs. 1 Nr. 3 UStG)' },
  { key: 4, rate: 5.5, description: 'Durchschnittsatz (§ 24 Abs. 1 Nr. 1 UStG)' },
  { key: 5, rate: 0, description: 'Nicht Steuerbar' },
  { key: 6, rate: 0, description: 'Umsatzsteuerfrei' },
];

/** The keys vat.csv always lists; any other key only when an order used it. */
export const AlwaysListedVatKeys = [1, 2, 5, 6];

/**
 * The key of an order's tax rate: 19 → 1, 7 → 2, 10.7 → 3, 5.5 → 4, 0 → 6 (tax free), no rate or
 * text that is no rate → 5 (not taxable: no tax was taken out of it); any other rate gets a key of
 * its own from 1000 on (1000 + rate × 100: 16 % is 2600), as the standard allows for rates it does
 * not list.
 */
export function vatKeyOf(rate: string): VatKey {
  let key = keys.get(rate);
  if (!key) {
    key = keyOfRate(rate);
    if (keys.size < 1000) keys.set(rate, key);
  }
  return key;
}

const keys = new Map<string, VatKey>();

function keyOfRate(rate: string): VatKey {
  if (!isDecimalRate(rate)) return StandardVatKeys[4]!;
  const value = rateNumber(rate);
  if (value === 0) return StandardVatKeys[5]!;
  const standard = StandardVatKeys.slice(0, 4).find((k) => k.rate === value);
  if (standard) return standard;
  return { key: 1000 + Math.round(value * 100), rate: value, description: `Steuersatz ${String(value).replace('.', ',')} %` };
}

/** ZAHLART_TYP of a payment method: Bar, ECKarte, Kreditkarte, ElZahlungsdienstleister or Unbar. */
export function paymentTypeOf(method: string): string {
  const m = method.toLowerCase();
  if (m === 'cash' || m === 'bar') return 'Bar';
  if (m === 'girocard' || m.includes('maestro') || m === 'ec' || m === 'eccard' || m === 'dedirectdebit') return 'ECKarte';
  if (m.startsWith('creditcard') || ['visa', 'mastercard', 'amex', 'americanexpress', 'dinersclub', 'jcb'].includes(m)) return 'Kreditkarte';
  if (['applepay', 'googlepay', 'paypal', 'twint', 'postfinancecard', 'klarna', 'externalbilling', 'gatekeeper'].includes(m) || m.includes('pay')) {
    return 'ElZahlungsdienstleister';
  }
  return 'Unbar';
}

/** GV_TYP of an order line: deposits are Pfand, promotions and coupons Rabatt, everything else Umsatz. */
export function businessCaseOf(lineType: string, amount: number): string {
  if (lineType === 'deposit') return amount < 0 ? 'PfandRueckzahlung' : 'Pfand';
  if (lineType === 'promotion' || lineType === 'discount' || lineType === 'coupon') return 'Rabatt';
  if (lineType === 'depositReturnVoucher' || lineType === 'depositReturn') return 'PfandRueckzahlung';
  return 'Umsatz';
}

const Alpha3: Record<string, string> = {
  DE: 'DEU', AT: 'AUT', CH: 'CHE', LI: 'LIE', LU: 'LUX', BE: 'BEL', NL: 'NLD', FR: 'FRA', IT: 'ITA', ES: 'ESP',
  PT: 'PRT', DK: 'DNK', SE: 'SWE', NO: 'NOR', FI: 'FIN', PL: 'POL', CZ: 'CZE', SK: 'SVK', HU: 'HUN', SI: 'SVN',
  HR: 'HRV', IE: 'IRL', GB: 'GBR', GR: 'GRC', RO: 'ROU', BG: 'BGR', EE: 'EST', LV: 'LVA', LT: 'LTU', MT: 'MLT',
  CY: 'CYP', IS: 'ISL', US: 'USA', CA: 'CAN', TR: 'TUR',
};

const Names: Record<string, string> = {
  germany: 'DEU', deutschland: 'DEU', austria: 'AUT', österreich: 'AUT', oesterreich: 'AUT', switzerland: 'CHE', schweiz: 'CHE',
};

/** ISO 3166 alpha-3 of a country as settings and shops write it (DE, DEU, Germany); '' when unknown. */
export function countryCodeOf(country: string): string {
  const value = country.trim();
  if (/^[A-Za-z]{3}$/.test(value) && Object.values(Alpha3).includes(value.toUpperCase())) return value.toUpperCase();
  if (/^[A-Za-z]{2}$/.test(value)) return Alpha3[value.toUpperCase()] ?? '';
  return Names[value.toLowerCase()] ?? '';
}
