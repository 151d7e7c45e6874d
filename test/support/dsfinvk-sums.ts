export type Row = Record<string, string>;

export interface ClosingTotals {
  sequenceNumber: number;
  total: number;
  taxShares: Array<{ rate: number; net: number; tax: number; total: number }>;
  shareByPaymentMethod: Array<{ paymentMethod: string; amount: number }>;
  orderCount: number;
}

/** A number column as an integer in 1/100000 (exact), or undefined for an empty value. */
export function units(value: string | undefined): bigint {
  if (!value) return 0n;
  const [whole = '0', fraction = ''] = value.replace('-', '').split(',');
  const scaled = BigInt(whole) * 100_000n + BigInt(fraction.padEnd(5, '0').slice(0, 5));
  return value.startsWith('-') ? -scaled : scaled;
}

/** Cents (1/100) of a currency amount in 1/100000. */
export const cents = (value: bigint) => Number(value / 1000n);

/**
 * The sums an auditor's checker adds up in a DSFinV-K export (shared/reference/dsfinvk.md,
 * "Consistency"): per Beleg, its VAT rows, its payments and its positions agree; the
 * Kassenabschluss is the sum of the Einzelaufzeichnung; and both are the closing's own totals.
 * Adds what does not add up to `problems`.
 */
export function checkSums(rows: Record<string, Row[]>, closing: ClosingTotals, problems: string[]): void {
  const r = (file: string) => rows[file] ?? [];
  const closingRow = r('cashpointclosing.csv')[0];
  const receipts = r('transactions.csv');
  const positions = new Map(r('lines.csv').map((line) => [`${line.BON_ID}|${line.POS_ZEILE}`, line]));
  const vatKeys = new Map(r('vat.csv').map((v) => [v.UST_SCHLUESSEL!, units(v.UST_SATZ)]));

  // Per Beleg: VAT rows = UMS_BRUTTO = payments; positions = VAT rows per key.
  const sumBy = (list: Row[], keyOf: (row: Row) => string, value: (row: Row) => bigint) => {
    const sums = new Map<string, bigint>();
    for (const row of list) sums.set(keyOf(row), (sums.get(keyOf(row)) ?? 0n) + value(row));
    return sums;
  };
  const vatPerBon = sumBy(r('transactions_vat.csv'), (v) => v.BON_ID!, (v) => units(v.BON_BRUTTO));
  const paidPerBon = sumBy(r('datapayment.csv'), (v) => v.BON_ID!, (v) => units(v.BASISWAEH_BETRAG));
  for (const t of receipts) {
    const gross = units(t.UMS_BRUTTO);
    if ((vatPerBon.get(t.BON_ID!) ?? 0n) !== gross) problems.push(`Beleg ${t.BON_ID}: Σ BON_BRUTTO ${vatPerBon.get(t.BON_ID!) ?? 0n} ≠ UMS_BRUTTO ${gross}`);
    if ((paidPerBon.get(t.BON_ID!) ?? 0n) !== gross) problems.push(`Beleg ${t.BON_ID}: Σ BASISWAEH_BETRAG ≠ UMS_BRUTTO`);
  }
  for (const part of ['BRUTTO', 'NETTO', 'UST'] as const) {
    const byPosition = sumBy(r('lines_vat.csv'), (v) => `${v.BON_ID}|${v.UST_SCHLUESSEL}`, (v) => units(v[`POS_${part}`]));
    const byReceipt = sumBy(r('transactions_vat.csv'), (v) => `${v.BON_ID}|${v.UST_SCHLUESSEL}`, (v) => units(v[`BON_${part}`]));
    for (const k of new Set([...byPosition.keys(), ...byReceipt.keys()])) {
      if ((byPosition.get(k) ?? 0n) !== (byReceipt.get(k) ?? 0n)) problems.push(`Beleg/key ${k}: Σ POS_${part} ≠ BON_${part}`);
    }
  }

  // Kassenabschluss = Σ Einzelaufzeichnung.
  const payments = r('payment.csv');
  const allPayments = payments.reduce((s, p) => s + units(p.Z_ZAHLART_BETRAG), 0n);
  const cash = payments.filter((p) => p.ZAHLART_TYP === 'Bar').reduce((s, p) => s + units(p.Z_ZAHLART_BETRAG), 0n);
  if (closingRow && units(closingRow.Z_SE_ZAHLUNGEN) !== allPayments) problems.push('Z_SE_ZAHLUNGEN ≠ Σ payment');
  if (closingRow && units(closingRow.Z_SE_BARZAHLUNGEN) !== cash) problems.push('Z_SE_BARZAHLUNGEN ≠ Σ Bar');
  const cashRow = r('cash_per_currency.csv');
  if (cashRow.reduce((s, c) => s + units(c.ZAHLART_BETRAG_WAEH), 0n) !== cash) problems.push('cash_per_currency ≠ Σ Bar');
  const fromDetails = sumBy(r('datapayment.csv'), (p) => `${p.ZAHLART_TYP}|${p.ZAHLART_NAME}`, (p) => units(p.BASISWAEH_BETRAG));
  const fromClosing = sumBy(payments, (p) => `${p.ZAHLART_TYP}|${p.ZAHLART_NAME}`, (p) => units(p.Z_ZAHLART_BETRAG));
  for (const k of new Set([...fromDetails.keys(), ...fromClosing.keys()])) {
    if ((fromDetails.get(k) ?? 0n) !== (fromClosing.get(k) ?? 0n)) problems.push(`payment ${k}: ≠ Σ datapayment`);
  }
  const caseOf = (v: Row) => {
    const line = positions.get(`${v.BON_ID}|${v.POS_ZEILE}`);
    return `${line?.GV_TYP}|${line?.GV_NAME}|${line?.AGENTUR_ID}|${v.UST_SCHLUESSEL}`;
  };
  for (const [part, column] of [['BRUTTO', 'Z_UMS_BRUTTO'], ['NETTO', 'Z_UMS_NETTO'], ['UST', 'Z_UST']] as const) {
    const details = sumBy(r('lines_vat.csv'), caseOf, (v) => units(v[`POS_${part}`]));
    const cases = sumBy(r('businesscases.csv'), (c) => `${c.GV_TYP}|${c.GV_NAME}|${c.AGENTUR_ID}|${c.UST_SCHLUESSEL}`, (c) => units(c[column]));
    for (const k of new Set([...details.keys(), ...cases.keys()])) {
      if ((details.get(k) ?? 0n) !== (cases.get(k) ?? 0n)) problems.push(`businesscases ${k}: ${column} ≠ Σ lines_vat POS_${part}`);
    }
  }

  // Against the closing's own totals.
  if (closingRow && cents(units(closingRow.Z_SE_ZAHLUNGEN)) !== closing.total) problems.push(`Z_SE_ZAHLUNGEN ${closingRow.Z_SE_ZAHLUNGEN} ≠ the closing's total ${closing.total}`);
  const byMethod = sumBy(payments, (p) => p.ZAHLART_NAME!, (p) => units(p.Z_ZAHLART_BETRAG));
  const methods = closing.shareByPaymentMethod.filter((s) => s.amount !== 0);
  if (methods.length !== [...byMethod.values()].filter((v) => v !== 0n).length) problems.push('payment.csv and shareByPaymentMethod name other methods');
  for (const share of methods) if (cents(byMethod.get(share.paymentMethod) ?? 0n) !== share.amount) problems.push(`payment ${share.paymentMethod} ≠ shareByPaymentMethod`);
  const byRate = new Map<string, { gross: bigint; net: bigint; tax: bigint }>();
  for (const c of r('businesscases.csv')) {
    const rate = String(Number(vatKeys.get(c.UST_SCHLUESSEL!) ?? 0n) / 100_000);
    const sum = byRate.get(rate) ?? { gross: 0n, net: 0n, tax: 0n };
    sum.gross += units(c.Z_UMS_BRUTTO);
    sum.net += units(c.Z_UMS_NETTO);
    sum.tax += units(c.Z_UST);
    byRate.set(rate, sum);
  }
  for (const share of closing.taxShares) {
    const sum = byRate.get(String(share.rate));
    if (!sum || cents(sum.gross) !== share.total || cents(sum.net) !== share.net || cents(sum.tax) !== share.tax) {
      problems.push(`rate ${share.rate}: businesscases ${JSON.stringify(sum && { gross: cents(sum.gross), net: cents(sum.net), tax: cents(sum.tax) })} ≠ taxShares ${JSON.stringify(share)}`);
    }
  }
  if (receipts.length !== closing.orderCount) problems.push(`${receipts.length} Belege, the closing lists ${closing.orderCount} orders`);
}
