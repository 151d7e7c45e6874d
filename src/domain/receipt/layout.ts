import { orderRates } from '../closings/order-rates.js';
import { dfkaQrCode, dfkaTime, fiscalTransaction, outageReason } from '../fiscal/reference.js';
import { maskNumber, parseReportedTime, receiptFormat, type ReceiptFormat } from './format.js';
import { labelsFor, type ReceiptLabels } from './labels.js';
import type { ReceiptLineItem, ReceiptOrder, ReceiptSettings } from './source.js';

/**
 * A receipt as German retail prints it, as text laid out in rows: the shop and company with their
 * tax ids, the sale's time and number, every line item (deposits, discounts and coupons as lines
 * of their own), the total, the payment with what the payment system reported, the tax table per
 * rate, and the order id for the QR code. Pure: the PDF writer only draws this.
 */
export interface ReceiptLayout {
  title: string;
  /** Centered at the top; the first is the shop's name. */
  header: string[];
  /** Label and value pairs under the header (date, receipt number, till). */
  sale: Array<[string, string]>;
  lines: ReceiptLine[];
  total: { label: string; amount: string };
  payment: Array<[string, string]>;
  taxTable: { head: [string, string, string, string]; rows: Array<[string, string, string, string]>; sum: [string, string, string, string] };
  /** The TSE block (KassenSichV), printed after the tax table; absent for an order without a TSE. */
  tse?: ReceiptTse;
  footer: string[];
  /** Encoded in the QR code: the order id. */
  qr: string;
  qrCaption: string;
  /** For the document's metadata. */
  author: string;
  /** The document's language (BCP 47), for screen readers. */
  language: string;
  createdAt: Date;
}

/**
 * What the TSE signed, as German receipts print it. Built once per receipt: the PDF writer only
 * wraps the long values and draws the QR code from `qr`.
 */
export interface ReceiptTse {
  heading: string;
  /** In print order; a `long` value (serial number, signature) goes on rows of its own under its label, wrapped. */
  rows: Array<{ label: string; value: string; long: boolean }>;
  /** The DFKA QR code's content; absent on an outage. */
  qr?: string;
  /** Set when the TSE could not sign: the heading to print plainly and the reason. */
  outage?: { label: string; reason: string };
}

export type LineKind = 'item' | 'deposit' | 'discount' | 'coupon';

export interface ReceiptLine {
  kind: LineKind;
  text: string;
  /** The line's total, formatted; '' when there is none (a coupon that took nothing). */
  amount: string;
  /** The tax rate's letter in the tax table (A, B, ...), '' for none. */
  taxMark: string;
  /** Rows under the line: amount × unit price, weight × price per unit, price modifiers. */
  details: string[];
}

export interface LayoutOptions {
  /** IANA zone the sale's time is written in. */
  timeZone: string;
}

export function receiptLayout(order: ReceiptOrder, settings: ReceiptSettings, options: LayoutOptions): ReceiptLayout {
  const labels = labelsFor(settings.locale);
  const format = receiptFormat(settings.locale, order.currency || settings.currency, options.timeZone);
  // Per rate, highest first: the order's own figures, as its closing sums them and its DSFinV-K
  // Beleg declares them (closings/order-rates.ts): computed from the line items where a PoS left
  // them out, and what they leave of the total in a row of its own, so the table always adds up.
  const taxes = orderRates(order);
  const marks = new Map(taxes.map((t, i) => [t.rate, taxMark(i)]));
  const finalizedAt = new Date(order.finalizedAt);
  const at = Number.isNaN(finalizedAt.getTime()) ? new Date(0) : finalizedAt;

  const shop = order.shop;
  const company = settings.companyAdress;
  const shopBlock = [shop.name, shop.street, joined(shop.zip, shop.city), shop.phone].filter(Boolean);
  const companyBlock = [
    settings.companyName,
    company.street,
    joined(company.zip, company.city),
    company.country,
    settings.taxNumber && `${labels.taxNumber} ${settings.taxNumber}`,
    settings.vatID && `${labels.vatID} ${settings.vatID}`,
  ].filter(Boolean);

  const sale: Array<[string, string]> = [
    [labels.date, format.dateTime(at)],
    [labels.receiptNumber, String(order.sequenceNumber)],
    order.checkoutDevice.type === 'pos' ? [labels.till, order.checkoutDeviceID] : [labels.till, labels.selfCheckout],
  ];
  if (order.customer.loyaltyCard) sale.push([labels.loyaltyCard, maskNumber(order.customer.loyaltyCard)]);

  const sums = taxes.reduce((s, t) => ({ net: s.net + t.net, tax: s.tax + t.tax, gross: s.gross + t.gross }), { net: 0, tax: 0, gross: 0 });
  return {
    title: labels.title,
    header: companyBlock.length ? [...shopBlock, '', ...companyBlock] : shopBlock,
    sale,
    lines: inPrintOrder(order.lineItems).map((item) => receiptLine(item, labels, format, marks.get(item.taxRate) ?? '')),
    total: { label: `${labels.total} ${order.currency || settings.currency}`, amount: format.money(order.price.price) },
    payment: paymentRows(order, labels, format),
    taxTable: {
      head: [labels.taxTable.rate, labels.taxTable.net, labels.taxTable.tax, labels.taxTable.gross],
      rows: taxes.map((t, i) => [`${taxMark(i)} ${t.rate === '' ? labels.taxTable.noRate : format.rate(t.rate)}`, format.money(t.net), format.money(t.tax), format.money(t.gross)]),
      sum: [labels.taxTable.sum, format.money(sums.net), format.money(sums.tax), format.money(sums.gross)],
    },
    ...(order.fiscalReference ? { tse: tseBlock(order.fiscalReference, labels) } : {}),
    footer: [labels.thanks],
    qr: order.id,
    qrCaption: `${labels.orderId} ${order.id}`,
    author: settings.companyName || shop.name,
    language: settings.locale,
    createdAt: at,
  };
}

function receiptLine(item: ReceiptLineItem, labels: ReceiptLabels, format: ReceiptFormat, taxMark: string): ReceiptLine {
  const kind = lineKind(item.type);
  const details: string[] = [];
  let text = item.name;
  let amount = format.money(item.totalPrice);
  switch (kind) {
    case 'item':
    case 'deposit': {
      if (kind === 'deposit' && !/pfand|deposit/i.test(text)) text = text ? `${labels.deposit} ${text}` : labels.deposit;
      const times = item.amount > 1 ? `${format.integer(item.amount)} × ` : '';
      if (item.weight > 0) details.push(`${times}${format.weight(item.weight, item.weightUnit, item.referenceUnit)} × ${format.unitPrice(item.price, item.referenceUnit)}`);
      else if (item.units > 0) details.push(`${times}${format.integer(item.units)} ${labels.pieces} × ${format.money(item.price)}`);
      else if (item.amount > 1) details.push(`${times}${format.money(item.price)}`);
      break;
    }
    case 'discount':
      text = text || labels.discount;
      if (item.discountPercentage !== undefined && !text.includes('%')) text = `${text} ${format.rate(String(item.discountPercentage))}`;
      break;
    case 'coupon':
      text = `${labels.coupon}: ${text || item.couponID}`;
      if (item.totalPrice === 0) amount = '';
      // A scanned coupon no promotion used took nothing: the customer should see that it is unspent.
      if (item.redeemed !== undefined) details.push(item.redeemed ? labels.couponRedeemed : labels.couponNotRedeemed);
      break;
  }
  for (const m of item.priceModifiers) {
    const value = m.price !== undefined ? format.money(m.price) : m.percentage !== undefined ? format.rate(String(m.percentage)) : '';
    details.push([m.name || labels.discount, value].filter(Boolean).join(' '));
  }
  return { kind, text, amount, taxMark, details };
}

/**
 * Line items in the order's order, except that a line referring to another (a deposit, an item's
 * discount or coupon) is printed right under it, as a till prints it.
 */
function inPrintOrder(items: readonly ReceiptLineItem[]): ReceiptLineItem[] {
  const ids = new Set(items.map((i) => i.id).filter(Boolean));
  const under = new Map<string, ReceiptLineItem[]>();
  for (const item of items) {
    if (item.refersTo && item.refersTo !== item.id && ids.has(item.refersTo)) under.set(item.refersTo, [...(under.get(item.refersTo) ?? []), item]);
  }
  const out: ReceiptLineItem[] = [];
  const placed = new Set<ReceiptLineItem>();
  const place = (item: ReceiptLineItem) => {
    if (placed.has(item)) return;
    placed.add(item);
    out.push(item);
    for (const child of under.get(item.id) ?? []) place(child);
  };
  for (const item of items) if (!(item.refersTo && item.refersTo !== item.id && ids.has(item.refersTo))) place(item);
  for (const item of items) place(item); // lines in a cycle of references, as they come
  return out;
}

function lineKind(type: string): LineKind {
  switch (type) {
    case 'deposit':
      return 'deposit';
    case 'promotion':
    case 'discount':
      return 'discount';
    case 'coupon':
      return 'coupon';
    default:
      return 'item';
  }
}

/** A, B, C, ... as German receipts mark the rates (A the highest). */
function taxMark(index: number): string {
  return index < 26 ? String.fromCharCode(65 + index) : String(index + 1);
}

/** What the payment system reported that a receipt shows; values cut to a printable length. */
function paymentRows(order: ReceiptOrder, labels: ReceiptLabels, format: ReceiptFormat): Array<[string, string]> {
  const method = order.paymentMethod;
  // Own names only: a method called "toString" is no name of Object.prototype's.
  const name = Object.hasOwn(labels.paymentMethods, method) ? labels.paymentMethods[method]! : method;
  const rows: Array<[string, string]> = [[labels.paymentMethod, name]];
  rows.push([labels.paid, format.money(order.paidAmount)]);
  const result = order.paymentResult;
  const field = (key: string) => {
    const value = result[key];
    return typeof value === 'string' || typeof value === 'number' ? String(value).slice(0, 64) : '';
  };
  const pan = field('pan') || field('maskedPAN');
  if (pan) rows.push([labels.card, maskNumber(pan)]);
  const aid = field('aid');
  if (aid) rows.push([labels.authorizationCode, aid]);
  const approval = field('processorApprovalCode');
  if (approval) rows.push([labels.approvalCode, approval]);
  const reference = field('processorReferenceNumber');
  if (reference) rows.push([labels.referenceNumber, reference]);
  const mandate = field('mandateReference');
  if (mandate) rows.push([labels.mandateReference, mandate]);
  const reported = field('time') || field('transactionTime');
  const time = reported ? parseReportedTime(reported) : undefined;
  if (time) rows.push([labels.transactionTime, format.dateTime(time)]);
  return rows;
}

function tseBlock(reference: NonNullable<ReceiptOrder['fiscalReference']>, labels: ReceiptLabels): ReceiptTse {
  const tx = fiscalTransaction(reference);
  const tse = labels.tse;
  const serial = { label: tse.serial, value: reference.securityDeviceModule.serialNumber, long: true };
  if (tx.outage) {
    // No signature data: the receipt says plainly that the TSE failed (the sale stands, § 146a AO).
    return { heading: tse.heading, rows: [serial], outage: { label: tse.outage, reason: outageReason(tx.outage) } };
  }
  return {
    heading: tse.heading,
    rows: [
      serial,
      { label: tse.transaction, value: String(reference.transactionNumber), long: false },
      { label: tse.counter, value: String(tx.finish.counter), long: false },
      { label: tse.start, value: dfkaTime(tx.startedAt, tx.start.timestamp), long: false },
      { label: tse.end, value: dfkaTime(tx.finishedAt, tx.finish.timestamp), long: false },
      { label: tse.algorithm, value: reference.securityDeviceModule.signatureAlgorithm, long: false },
      { label: tse.signature, value: tx.finish.signature ?? '', long: true },
    ],
    qr: dfkaQrCode(tx),
  };
}

function joined(...parts: string[]): string {
  return parts.filter(Boolean).join(' ');
}
