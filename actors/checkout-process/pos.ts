import canonicalize from 'canonicalize';
import type { Pricing, PricingLine } from '../../subjects/checkout-process.js';
import { PosCheckoutProcessInput, type PosCheckoutProcess, type PosCheckoutProcessInput as PosTarget, type PosState, type TaxShare } from '../../subjects/pos.js';
import { AppError } from '../../src/errors.js';
import { isRecord, mergePatch } from '../../subjects/formats/json.js';
import { finishedMessage, isFinished, movePayment, passChecks, refused, type ChangeEvent, type Decision, type ProcessRecord } from './state.js';

/**
 * The PoS handover as pure rules: the PoS view of a process, and what a PoS's PUT or merge patch of
 * that view does. A PoS moves the state (pending → processing → successful or failed) and, with each
 * move, may change only the fields of that move:
 *
 * | move to    | fields it may change                                          |
 * |------------|---------------------------------------------------------------|
 * | processing | processedBy                                                   |
 * | successful | lineItems, taxShares, netPrice, totalPrice, loyaltyCard       |
 * | failed     | failedReason                                                  |
 *
 * The final figures of a successful PoS checkout must add up: the line items' totals and the tax
 * shares' totals to totalPrice, the shares' nets to netPrice, and net + share = total per rate.
 */
export const PosMoveFields: Readonly<Record<PosState, readonly (keyof PosTarget)[]>> = {
  pending: [],
  processing: ['processedBy'],
  successful: ['lineItems', 'taxShares', 'netPrice', 'totalPrice', 'loyaltyCard'],
  failed: ['failedReason'],
};

export function posView(process: ProcessRecord): PosCheckoutProcess {
  const { lineItems, price } = process.pricing;
  return {
    lineItems: lineItems.map((l) => ({
      sku: l.sku ?? '',
      scannedCode: l.scannedCode ?? '',
      amount: l.amount ?? 0,
      weight: l.weight ?? 0,
      units: l.units ?? 0,
      price: l.price ?? 0,
      totalPrice: l.totalPrice ?? 0,
      taxRate: l.taxRate ?? '',
    })),
    taxShares: taxSharesOf(price),
    netPrice: price.netPrice ?? 0,
    totalPrice: price.price,
    state: process.paymentState,
    loyaltyCard: process.pos.loyaltyCard ?? process.checkoutInfo.customer.loyaltyCard ?? '',
    processedBy: process.pos.processedBy ?? '',
    failedReason: process.pos.failedReason ?? '',
  };
}

/** Tax shares from a price's per-rate maps; null when an (incomplete) pricing has none. */
export function taxSharesOf(price: Pricing['price']): TaxShare[] | null {
  const { tax, taxNet, taxPre } = price;
  if (!tax || !taxNet || !taxPre) return null;
  return Object.keys(taxPre)
    .sort((a, b) => Number(a) - Number(b))
    .map((rate) => ({ rate, net: taxNet[rate] ?? 0, share: tax[rate] ?? 0, total: taxPre[rate] ?? 0 }));
}

/**
 * The PoS integration document of the public API names the final figures `price`, `tax` and
 * `taxNet` (per rate) where the spec's PoS Checkout Process has `totalPrice` and `taxShares`: a PoS
 * built on it is understood too. The spec's names win when both are given.
 */
function withSpecFigures(patch: Record<string, unknown>): Record<string, unknown> {
  const { price, tax, taxNet, ...rest } = patch;
  const figures: Record<string, unknown> = {};
  if (price !== undefined && rest.totalPrice === undefined) figures.totalPrice = price;
  if (isRecord(tax) && isRecord(taxNet) && rest.taxShares === undefined) {
    figures.taxShares = Object.keys(tax).map((rate) => ({ rate, net: taxNet[rate], share: tax[rate], total: Number(taxNet[rate]) + Number(tax[rate]) }));
  }
  return { ...rest, ...figures };
}

/**
 * A PoS that takes a process over (moves it to processing or successful, or claims one a payment
 * system moved) is its supervision: the cashier checks the age and the goods, so the checks pass
 * with that move, performed by the PoS: its processedBy, else who sent the move (`caller`: its
 * credential or token sub).
 */
function supervisedByPos(process: ProcessRecord, processedBy: string, caller: string | undefined): { next: ProcessRecord; events: ChangeEvent[] } {
  return passChecks(process, processedBy || caller || null);
}

/** `caller`: the sub of who sends it (a PoS credential's `pos:<user>`), absent when it names nobody. */
export function decidePosUpdate(process: ProcessRecord, patch: Record<string, unknown>, at: Date, caller?: string): Decision {
  const current = posView(process);
  const parsed = PosCheckoutProcessInput.safeParse(mergePatch(current, withSpecFigures(patch)));
  if (!parsed.success) {
    const error = AppError.validation(parsed.error, 'PoS checkout process');
    return { kind: 'invalid', message: error.message, details: error.details };
  }
  const target = parsed.data;
  const changed = (Object.keys(target) as (keyof PosTarget)[]).filter((field) => field !== 'state' && canonicalize(target[field]) !== canonicalize(current[field]));

  if (target.state === current.state) return samePosState(process, target, changed, caller);

  const supervision = target.state === 'processing' || target.state === 'successful' ? supervisedByPos(process, target.processedBy, caller) : { next: process, events: [] };
  const move = movePayment(supervision.next, target.state, at);
  if (move.kind !== 'changed') return move;
  move.events.unshift(...supervision.events);
  const allowed = PosMoveFields[target.state];
  const disallowed = changed.filter((field) => !allowed.includes(field));
  if (disallowed.length) {
    return { kind: 'invalid', message: `a move to ${target.state} may change ${allowed.join(', ') || 'no other field'}; this one also changes ${disallowed.join(', ')}` };
  }

  const next = move.next;
  if (target.state === 'processing') {
    next.pos = { ...next.pos, processedBy: target.processedBy };
  } else if (target.state === 'failed') {
    next.pos = { ...next.pos, failedReason: target.failedReason };
  } else if (target.state === 'successful') {
    const mismatch = figuresMismatch(target);
    if (mismatch) return { kind: 'invalid', message: `the final figures do not add up: ${mismatch}` };
    next.pricing = pricingFromPos(process.pricing, target);
    if (changed.includes('loyaltyCard')) next.pos = { ...next.pos, loyaltyCard: target.loyaltyCard };
  }
  return move;
}

/** The PoS repeats the state it is in: a retry answers as it stands; only a first processedBy is news. */
function samePosState(process: ProcessRecord, target: PosTarget, changed: (keyof PosTarget)[], caller: string | undefined): Decision {
  if (!changed.length) return { kind: 'unchanged' };
  if (isFinished(process.paymentState)) return refused(finishedMessage(process));
  const holder = process.pos.processedBy;
  if (target.state === 'processing' && changed.length === 1 && changed[0] === 'processedBy') {
    if (holder) return refused(`the checkout is being processed by ${holder}`);
    // A PoS that claims a process a payment system moved to processing supervises it from then on.
    const supervision = supervisedByPos(process, target.processedBy, caller);
    return {
      kind: 'changed',
      next: { ...supervision.next, pos: { ...process.pos, processedBy: target.processedBy } },
      events: [...supervision.events, { domain: 'pos', event: 'processing' }],
    };
  }
  return { kind: 'invalid', message: `fields change only with a move of the state; in ${target.state} this one changes ${changed.join(', ')}` };
}

function figuresMismatch(target: PosTarget): string | undefined {
  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
  const lines = sum(target.lineItems.map((l) => l.totalPrice));
  if (lines !== target.totalPrice) return `the line items total ${lines}, totalPrice is ${target.totalPrice}`;
  if (target.netPrice > target.totalPrice) return `netPrice ${target.netPrice} exceeds totalPrice ${target.totalPrice}`;
  const shares = target.taxShares;
  if (!shares) return undefined;
  const bad = shares.find((s) => s.net + s.share !== s.total);
  if (bad) return `rate ${bad.rate}: net ${bad.net} + share ${bad.share} is not total ${bad.total}`;
  const total = sum(shares.map((s) => s.total));
  if (total !== target.totalPrice) return `the tax shares total ${total}, totalPrice is ${target.totalPrice}`;
  const net = sum(shares.map((s) => s.net));
  if (net !== target.netPrice) return `the tax shares' nets sum to ${net}, netPrice is ${target.netPrice}`;
  return undefined;
}

/**
 * The process's pricing after a successful PoS checkout: the PoS's line items, each keeping the id,
 * name, type and links of the line item it stands for (same SKU and code), and its totals.
 */
export function pricingFromPos(before: Pricing, target: PosTarget): Pricing {
  const unused = [...before.lineItems];
  const lineItems = target.lineItems.map((l, index): PricingLine => {
    const at = unused.findIndex((o) => (o.sku ?? '') === l.sku && (o.scannedCode ?? '') === l.scannedCode);
    const [original] = at >= 0 ? unused.splice(at, 1) : [];
    const base: PricingLine = original ?? { id: `pos-${index + 1}`, type: 'default', refersTo: null, name: '', priceOrigin: 'master' };
    return { ...base, sku: l.sku, scannedCode: l.scannedCode, amount: l.amount, weight: l.weight, units: l.units, price: l.price, totalPrice: l.totalPrice, taxRate: l.taxRate };
  });
  const price: Pricing['price'] = { price: target.totalPrice, netPrice: target.netPrice };
  if (target.taxShares) {
    price.tax = Object.fromEntries(target.taxShares.map((s) => [s.rate, s.share]));
    price.taxNet = Object.fromEntries(target.taxShares.map((s) => [s.rate, s.net]));
    price.taxPre = Object.fromEntries(target.taxShares.map((s) => [s.rate, s.total]));
  }
  return { lineItems, price };
}
