import { minorUnitDigits } from '../../../subjects/formats/money.js';
import type { FiscalReference } from '../../../subjects/fiscal.js';
import { divideRounded } from '../money.js';
import { includedTax, isDecimalRate, orderRates, type RateFigures } from '../closings/order-rates.js';
import type { ClosingOrder } from '../closings/totals.js';
import { businessCaseOf, vatKeyOf } from './codes.js';

/**
 * An order as a Beleg: its line items as DSFinV-K positions with their VAT split. Pure.
 *
 * The Beleg's VAT per rate is the order's own (closings/order-rates.ts), so the positions are
 * made to add up to it: each line's tax is worked out on its own, the rounding difference of a rate
 * goes to its largest line, and a rate whose lines do not add up to the order's gross of that rate
 * (a pricing update may be incomplete) gets a balancing position. Coupon and promotion lines
 * without an amount are no positions.
 */

export interface ExportLine {
  id?: string;
  sku?: string;
  name?: string;
  type?: string;
  amount?: number;
  taxRate?: string;
  price?: number;
  totalPrice?: number;
  scannedCode?: string;
  weight?: number;
  weightUnit?: string;
}

export interface ExportOrder extends ClosingOrder {
  id: string;
  sequenceNumber: number;
  startedAt: string;
  finalizedAt: string;
  checkoutDevice?: { type?: string; externalID?: string };
  lineItems?: readonly ExportLine[];
  /** What the TSE signed (transactions_tse.csv, tse.csv); absent without a TSE. */
  fiscalReference?: FiscalReference;
}

export interface Position {
  /** POS_ZEILE: the line's place in the order (1-based), or `A<n>` for a balancing position. */
  line: string;
  text: string;
  businessCase: string;
  sku: string;
  gtin: string;
  /** MENGE and EINHEIT. */
  quantity: number;
  unit: string;
  vatKey: number;
  gross: number;
  net: number;
  tax: number;
  /** STK_BR in 1/100000 of the currency unit. */
  unitPrice: number;
}

export interface BelegVat {
  vatKey: number;
  rate: RateFigures;
}

const GtinPattern = /^(?:\d{8}|\d{12,14})$/;

export function positionsOf(order: ExportOrder, currency: string): { vat: BelegVat[]; positions: Position[] } {
  const rates = orderRates(order);
  const lines = (order.lineItems ?? [])
    .map((line, index) => ({ line, place: String(index + 1) }))
    .filter(({ line }) => !((line.type === 'coupon' || line.type === 'promotion') && !line.totalPrice));
  const byRate = new Map<string, Array<{ line: ExportLine; place: string }>>();
  for (const entry of lines) {
    const rate = entry.line.taxRate ?? '';
    byRate.set(rate, [...(byRate.get(rate) ?? []), entry]);
  }
  const targets = new Map(rates.map((r) => [r.rate, r]));
  for (const rate of byRate.keys()) if (!targets.has(rate)) targets.set(rate, { rate, gross: 0, net: 0, tax: 0 });

  const digits = minorUnitDigits(currency);
  const positions: Position[] = [];
  let balancing = 0;
  for (const [rate, target] of targets) {
    const key = vatKeyOf(rate).key;
    const group: Position[] = (byRate.get(rate) ?? []).map(({ line, place }) => positionOfLine(line, place, key, rate, digits));
    const gross = group.reduce((sum, p) => sum + p.gross, 0);
    if (gross !== target.gross) {
      balancing += 1;
      const difference = target.gross - gross;
      group.push({
        line: `A${balancing}`, text: 'Ausgleich zur Bonsumme', businessCase: 'Umsatz', sku: '', gtin: '', quantity: 1, unit: 'Stück',
        vatKey: key, gross: difference, net: 0, tax: taxOf(difference, rate), unitPrice: scaleTo5(difference, 1, digits),
      });
    }
    if (!group.length) continue;
    const tax = group.reduce((sum, p) => sum + p.tax, 0);
    if (tax !== target.tax) {
      const largest = group.reduce((a, b) => (Math.abs(b.gross) > Math.abs(a.gross) ? b : a));
      largest.tax += target.tax - tax;
    }
    for (const p of group) p.net = p.gross - p.tax;
    positions.push(...group);
  }
  positions.sort((a, b) => placeOrder(a.line) - placeOrder(b.line));
  return { vat: vatOf(rates), positions };
}

/** One VAT row per key: rates that share a key ("" and text that is no rate) are summed under it. */
function vatOf(rates: readonly RateFigures[]): BelegVat[] {
  const byKey = new Map<number, BelegVat>();
  for (const rate of rates) {
    const vatKey = vatKeyOf(rate.rate).key;
    const row = byKey.get(vatKey);
    if (!row) byKey.set(vatKey, { vatKey, rate: { ...rate } });
    else {
      row.rate.gross += rate.gross;
      row.rate.net += rate.net;
      row.rate.tax += rate.tax;
    }
  }
  return [...byKey.values()];
}

/** The tax a gross amount includes at a rate: tax.ts's rule, in plain numbers while they are exact. */
function taxOf(gross: number, rate: string): number {
  if (gross === 0 || !isDecimalRate(rate)) return 0;
  let parsed = Rates.get(rate);
  if (!parsed) {
    const [whole = '0', fraction = ''] = rate.split('.');
    const scale = 10 ** fraction.length;
    const r = Number(whole) * scale + Number(fraction || '0');
    parsed = { r, denominator: 100 * scale + r };
    Rates.set(rate, parsed);
  }
  const numerator = Math.abs(gross) * parsed.r;
  if (!Number.isSafeInteger(numerator)) return includedTax(gross, rate);
  let quotient = Math.floor(numerator / parsed.denominator);
  if ((numerator - quotient * parsed.denominator) * 2 >= parsed.denominator) quotient += 1;
  return gross < 0 ? -quotient : quotient;
}

const Rates = new Map<string, { r: number; denominator: number }>();

function positionOfLine(line: ExportLine, place: string, vatKey: number, rate: string, digits: number): Position {
  const gross = line.totalPrice ?? 0;
  const weighed = (line.weight ?? 0) > 0;
  const quantity = weighed ? line.weight! : Math.max(1, line.amount ?? 1);
  return {
    line: place,
    text: line.name ?? '',
    businessCase: businessCaseOf(line.type ?? 'default', gross),
    sku: line.sku ?? '',
    gtin: line.scannedCode && GtinPattern.test(line.scannedCode) ? line.scannedCode : '',
    quantity,
    unit: weighed ? line.weightUnit || 'g' : 'Stück',
    vatKey,
    gross,
    net: 0,
    tax: taxOf(gross, rate),
    unitPrice: scaleTo5(gross, quantity, digits),
  };
}

/** Balancing positions (`A<n>`) after the order's own lines. */
function placeOrder(line: string): number {
  return line.startsWith('A') ? 1e9 + Number(line.slice(1)) : Number(line);
}

/** gross / quantity in 1/100000 of the currency unit. */
function scaleTo5(gross: number, quantity: number, digits: number): number {
  if (digits <= 5 && Number.isSafeInteger(gross * 10 ** (5 - digits))) {
    const numerator = Math.abs(gross) * 10 ** (5 - digits);
    let quotient = Math.floor(numerator / quantity);
    if ((numerator - quotient * quantity) * 2 >= quantity) quotient += 1;
    return gross < 0 ? -quotient : quotient;
  }
  return divideRounded(BigInt(gross) * 10n ** BigInt(Math.max(0, 5 - digits)), BigInt(quantity) * 10n ** BigInt(Math.max(0, digits - 5)));
}
