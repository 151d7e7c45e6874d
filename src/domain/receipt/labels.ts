/**
 * The fixed words of a receipt, per language of the project's locale: German (the default locale
 * is de-DE) and English for every other language.
 */
export interface ReceiptLabels {
  title: string;
  taxNumber: string;
  vatID: string;
  date: string;
  receiptNumber: string;
  till: string;
  selfCheckout: string;
  deposit: string;
  discount: string;
  coupon: string;
  total: string;
  paymentMethod: string;
  paid: string;
  card: string;
  authorizationCode: string;
  approvalCode: string;
  referenceNumber: string;
  mandateReference: string;
  transactionTime: string;
  loyaltyCard: string;
  /** noRate: the row of amounts without a known tax rate. */
  taxTable: { rate: string; net: string; tax: string; gross: string; sum: string; noRate: string };
  /** Under a coupon line: whether a promotion redeemed it. */
  couponRedeemed: string;
  couponNotRedeemed: string;
  pieces: string;
  orderId: string;
  thanks: string;
  /** The TSE block (KassenSichV): its heading and the names of what the TSE signed. */
  tse: {
    heading: string;
    serial: string;
    transaction: string;
    counter: string;
    start: string;
    end: string;
    algorithm: string;
    signature: string;
    /** Printed instead of the signature data when the TSE could not sign. */
    outage: string;
  };
  paymentMethods: Readonly<Record<string, string>>;
}

/** Names of the payment methods the app SDKs know; others print as their id. */
const methodNames = {
  girocard: 'girocard',
  creditCardVisa: 'Visa',
  creditCardMastercard: 'Mastercard',
  creditCardAmericanExpress: 'American Express',
  applePay: 'Apple Pay',
  googlePay: 'Google Pay',
  paydirekt: 'paydirekt',
  twint: 'TWINT',
  postFinanceCard: 'PostFinance Card',
} as const;

const de: ReceiptLabels = {
  title: 'Kassenbon',
  taxNumber: 'St.-Nr.',
  vatID: 'USt-IdNr.',
  date: 'Datum',
  receiptNumber: 'Bon-Nr.',
  till: 'Kasse',
  selfCheckout: 'Self-Checkout (App)',
  deposit: 'Pfand',
  discount: 'Rabatt',
  coupon: 'Coupon',
  total: 'SUMME',
  paymentMethod: 'Zahlungsart',
  paid: 'Betrag',
  card: 'Karte',
  authorizationCode: 'Autorisierungscode',
  approvalCode: 'Genehmigungsnr.',
  referenceNumber: 'Referenznr.',
  mandateReference: 'Mandatsreferenz',
  transactionTime: 'Zeitpunkt',
  loyaltyCard: 'Kundenkarte',
  taxTable: { rate: 'MwSt.', net: 'Netto', tax: 'Steuer', gross: 'Brutto', sum: 'Summe', noRate: 'ohne MwSt.' },
  couponRedeemed: 'eingelöst',
  couponNotRedeemed: 'nicht eingelöst',
  pieces: 'Stk.',
  orderId: 'Beleg-ID',
  thanks: 'Vielen Dank für Ihren Einkauf!',
  tse: {
    heading: 'TSE-Daten',
    serial: 'TSE-Seriennummer',
    transaction: 'TSE-Transaktion',
    counter: 'TSE-Signaturzähler',
    start: 'TSE-Start',
    end: 'TSE-Ende',
    algorithm: 'TSE-Signaturalgorithmus',
    signature: 'TSE-Signatur',
    outage: 'TSE-Ausfall',
  },
  paymentMethods: { ...methodNames, cash: 'Bar', deDirectDebit: 'SEPA-Lastschrift', externalBilling: 'Rechnung', gatekeeperTerminal: 'Kartenzahlung', customerCardPOS: 'Kundenkarte' },
};

const en: ReceiptLabels = {
  title: 'Receipt',
  taxNumber: 'Tax no.',
  vatID: 'VAT ID',
  date: 'Date',
  receiptNumber: 'Receipt no.',
  till: 'Till',
  selfCheckout: 'Self-checkout (app)',
  deposit: 'Deposit',
  discount: 'Discount',
  coupon: 'Coupon',
  total: 'TOTAL',
  paymentMethod: 'Payment',
  paid: 'Amount',
  card: 'Card',
  authorizationCode: 'Authorization code',
  approvalCode: 'Approval code',
  referenceNumber: 'Reference no.',
  mandateReference: 'Mandate reference',
  transactionTime: 'Time',
  loyaltyCard: 'Loyalty card',
  taxTable: { rate: 'VAT', net: 'Net', tax: 'Tax', gross: 'Gross', sum: 'Total', noRate: 'no VAT' },
  couponRedeemed: 'redeemed',
  couponNotRedeemed: 'not redeemed',
  pieces: 'pcs',
  orderId: 'Order ID',
  thanks: 'Thank you for shopping with us!',
  // The German terms stay beside the English ones: a tax auditor reads them on every receipt.
  tse: {
    heading: 'TSE data (security device)',
    serial: 'TSE serial number',
    transaction: 'TSE transaction',
    counter: 'TSE signature counter',
    start: 'TSE start',
    end: 'TSE end',
    algorithm: 'TSE signature algorithm',
    signature: 'TSE signature',
    outage: 'TSE-Ausfall (security device outage)',
  },
  paymentMethods: { ...methodNames, cash: 'Cash', deDirectDebit: 'SEPA direct debit', externalBilling: 'Invoice', gatekeeperTerminal: 'Card payment', customerCardPOS: 'Customer card' },
};

export function labelsFor(locale: string): ReceiptLabels {
  return new Intl.Locale(locale).language === 'de' ? de : en;
}
