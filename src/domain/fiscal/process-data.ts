/**
 * What a TSE signs for a sale (DSFinV-K Anhang I, DFKA taxonomy): the processData of a
 * `Kassenbeleg-V1` finish. Pure: no I/O.
 *
 *     Beleg^<gross A>_<gross B>_<gross C>_<gross D>_<gross E>^<amount>:<Bar|Unbar>
 *     AVTransfer^<gross A>_<gross B>_<gross C>_<gross D>_<gross E>^
 *     AVBelegabbruch^0.00_0.00_0.00_0.00_0.00^
 *
 * Amounts are in currency units with two decimals and a point (14.04); the VAT letters are the
 * DSFinV-K's: A 19 %, B 7 %, C 10.7 %, D 5.5 %, E 0 %.
 */

/** The VAT rates (percent) of the letters A to E, in that order. */
export const FiscalVatRates = [19, 7, 10.7, 5.5, 0] as const;

/** The payment methods that are cash (`Bar`); every other one is `Unbar`. */
export const CashMethods: ReadonlySet<string> = new Set(['cash']);

/** The processData of an aborted or failed process: no turnover, no payment (Anhang I's own example). */
export const AbortProcessData = 'AVBelegabbruch^0.00_0.00_0.00_0.00_0.00^';

/** Minor units (cents) as currency units with two decimals: 1404 → 14.04, -5 → -0.05. */
export function fiscalAmount(minor: number): string {
  const sign = minor < 0 ? '-' : '';
  const abs = Math.abs(minor);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

export type ReceiptData = { kind: 'signable'; processData: string } | { kind: 'unsignable'; reason: string };

/**
 * The processData of a paid sale from its gross per tax rate (minor units, keyed by the rate as
 * decimal text, as prices carry it) and its payment. A rate the DSFinV-K has no letter for cannot
 * be described to a TSE: such a sale is `unsignable` (recorded as not signed, never signed falsely).
 */
export function receiptProcessData(grossPerRate: Readonly<Record<string, number>>, paid: { amount: number; method: string }): ReceiptData {
  const gross = grossPerLetter(grossPerRate);
  if ('reason' in gross) return { kind: 'unsignable', reason: gross.reason };
  const type = CashMethods.has(paid.method) ? 'Bar' : 'Unbar';
  return { kind: 'signable', processData: `Beleg^${gross.letters}^${fiscalAmount(paid.amount)}:${type}` };
}

/**
 * The processData of a sale handed to another till to be paid there (a `transferred` process):
 * DSFinV-K's AVTransfer with the cart's gross per rate and no payment (the other till takes it).
 */
export function transferProcessData(grossPerRate: Readonly<Record<string, number>>): ReceiptData {
  const gross = grossPerLetter(grossPerRate);
  if ('reason' in gross) return { kind: 'unsignable', reason: gross.reason };
  return { kind: 'signable', processData: `AVTransfer^${gross.letters}^` };
}

/** The five gross amounts A_B_C_D_E as text, or why a rate has no letter. */
function grossPerLetter(grossPerRate: Readonly<Record<string, number>>): { letters: string } | { reason: string } {
  const letters = FiscalVatRates.map(() => 0);
  for (const [rate, gross] of Object.entries(grossPerRate)) {
    const at = FiscalVatRates.findIndex((r) => r === Number(rate));
    if (at < 0) {
      if (gross === 0) continue;
      return { reason: `the tax rate ${rate} % has no DSFinV-K VAT letter (A 19, B 7, C 10.7, D 5.5, E 0)` };
    }
    letters[at]! += gross;
  }
  return { letters: letters.map(fiscalAmount).join('_') };
}

/**
 * The gross per tax rate of a pricing: its price's `taxPre` when it has one, else its line items'
 * totals by rate (a pricing update or a PoS without tax shares); undefined when a line has no rate.
 */
export function grossPerRate(pricing: {
  lineItems: ReadonlyArray<{ totalPrice?: number | undefined; taxRate?: string | undefined }>;
  price: { taxPre?: Record<string, number> | undefined };
}): Record<string, number> | undefined {
  if (pricing.price.taxPre) return pricing.price.taxPre;
  const sums: Record<string, number> = {};
  for (const line of pricing.lineItems) {
    if (line.taxRate === undefined || line.taxRate === '') return undefined;
    sums[line.taxRate] = (sums[line.taxRate] ?? 0) + (line.totalPrice ?? 0);
  }
  return sums;
}
