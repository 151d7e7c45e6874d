import fc from 'fast-check';
import t from 'tap';
import { formatAmount, minorUnitDigits, moneyFormatter } from '../subjects/formats/money.js';
import { receiptFormat } from '../src/domain/receipt/format.js';

/**
 * Money as people read it, in the portal (which bundles subjects/formats/money.ts) and on receipts:
 * amounts counted in the subunit of the service's table (ISO 4217), written with that many decimals
 * whatever Intl's own digits for the currency say.
 */
const nbsp = (s: string) => s.replace(/[\u00a0\u202f]/g, ' ');

t.test("forints, pesos, rials, pounds and dinars have ISO 4217's decimals, not Intl's (which has none for them)", async (t) => {
  // Intl (ICU 78, CLDR 48) writes these five without decimals; the portal divided by Intl's digits.
  t.equal(nbsp(moneyFormatter('de-DE', 'HUF')(123_456)), '1.234,56 HUF', '123456 fillér');
  t.equal(nbsp(moneyFormatter('en-GB', 'HUF')(123_456)), 'HUF 1,234.56');
  t.equal(nbsp(moneyFormatter('de-DE', 'COP')(5000)), '50,00 COP');
  t.equal(nbsp(moneyFormatter('de-DE', 'IQD')(1_234_567)), '1.234,567 IQD', 'three decimals: 1000 fils to the dinar');
  t.equal(nbsp(moneyFormatter('de-DE', 'JPY')(1234)), '1.234 ¥', 'a currency without a subunit');
  t.equal(nbsp(moneyFormatter('de-DE', 'EUR')(-199)), '-1,99 €');
  t.equal(nbsp(moneyFormatter('de-DE', 'EURO')(199)), '1,99 EURO', 'a currency Intl does not take is written after the number');
  t.equal(nbsp(receiptFormat('de-DE', 'HUF', 'Europe/Berlin').money(123_456)), '1.234,56 HUF', 'receipts write them so too');
});

t.test('every amount is written with exactly its digits, for any currency and safe integer', async () => {
  fc.assert(
    fc.property(fc.constantFrom('EUR', 'HUF', 'IQD', 'JPY', 'KWD', 'CLF', 'COP', 'ISK'), fc.constantFrom('de-DE', 'en-GB', 'en-US'), fc.maxSafeInteger(), (currency, locale, amount) => {
      const written = moneyFormatter(locale, currency)(amount);
      const digits = minorUnitDigits(currency);
      // The written digits, grouping and symbol aside, are the amount's own: nothing lost or rounded.
      const plain = formatAmount(Math.abs(amount), currency).replace('.', '');
      return written.replace(/\D/g, '') === plain && (digits === 0 || new RegExp(`[.,]\\d{${digits}}(?!\\d)`).test(written));
    }),
    { numRuns: 2000 },
  );
});
