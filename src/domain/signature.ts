import { createHmac, timingSafeEqual } from 'node:crypto';
import canonicalize from 'canonicalize';
import { CheckoutInfo, Price, ShopInformation, type LineItem } from '../../subjects/checkout.js';
import { AppError } from '../errors.js';

/**
 * The signature of a checkout info: a JWS (RFC 7515, HS256, header `typ: checkout-info+jws`) with a
 * detached payload, over the RFC 8785 canonical JSON of the checkoutInfo. Canonical, because clients
 * parse and re-serialize what they received: key order and number spelling do not matter, a changed
 * value does.
 *
 * HS256 is computed with node:crypto: the same bytes as any JWS library (jose verifies them, see the
 * tests), without the asynchronous WebCrypto call that cost 7% of a checkout's CPU.
 */
export const CheckoutInfoJwsType = 'checkout-info+jws';

const Header = Buffer.from(JSON.stringify({ alg: 'HS256', typ: CheckoutInfoJwsType })).toString('base64url');

/** The MAC of the JWS signing input, `<header>.<base64url of the canonical JSON>`, hashed in its parts. */
function hmac(key: Uint8Array, header: string, canonical: Buffer): Buffer {
  return createHmac('sha256', key).update(header).update('.').update(canonical.toString('base64url')).digest();
}

export function signCheckoutInfo(info: CheckoutInfo, key: Uint8Array): string {
  return signedCheckoutInfo(info, key).signature;
}

/**
 * The canonical JSON of a checkout info as UTF-8 (valid JSON, ready to send: the reply is written
 * around these bytes, not encoded again) and its signature.
 */
export function signedCheckoutInfo(info: CheckoutInfo, key: Uint8Array): { canonical: Buffer; signature: string } {
  const canonical = Buffer.from(canonicalCheckoutInfo(info));
  return { canonical, signature: `${Header}..${hmac(key, Header, canonical).toString('base64url')}` };
}

export interface VerifyOptions {
  /** How long a checkout info may be used after its createdAt. */
  ttlMs: number;
  now?: Date;
  /** The info's canonical JSON when the caller has it already (canonicalCheckoutInfoOf). */
  canonical?: string;
}

/** The RFC 8785 text of a checkout info as a client sent it back; `400 invalid_signature` if it has none. */
export function canonicalCheckoutInfoOf(info: unknown): string {
  let canonical: string | undefined;
  try {
    canonical = canonicalize(info);
  } catch {
    canonical = undefined;
  }
  if (canonical === undefined || typeof info !== 'object' || info === null) throw invalidSignature();
  return canonical;
}

function invalidSignature(): AppError {
  return new AppError(400, 'invalid_signature', 'the checkout info does not match its signature');
}

/**
 * Accepts a checkout info only with its own signature and within its time to live: otherwise
 * `400 invalid_signature` (any changed value, another key, a malformed or foreign signature) or
 * `400 checkout_info_expired`.
 */
export function verifyCheckoutInfo(info: { createdAt?: unknown }, signature: string, key: Uint8Array, options: VerifyOptions): void {
  const [header, payload, mac, ...rest] = signature.split('.');
  if (!header || payload !== '' || !mac || rest.length) throw invalidSignature();
  let alg: unknown;
  let typ: unknown;
  try {
    ({ alg, typ } = JSON.parse(Buffer.from(header, 'base64url').toString()) as { alg?: unknown; typ?: unknown });
  } catch {
    throw invalidSignature();
  }
  if (alg !== 'HS256' || typ !== CheckoutInfoJwsType) throw invalidSignature();
  const expected = hmac(key, header, Buffer.from(options.canonical ?? canonicalCheckoutInfoOf(info)));
  const given = Buffer.from(mac, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalidSignature();

  const createdAt = typeof info.createdAt === 'string' ? Date.parse(info.createdAt) : Number.NaN;
  if (!Number.isFinite(createdAt) || (options.now ?? new Date()).getTime() - createdAt > options.ttlMs) {
    throw new AppError(400, 'checkout_info_expired', 'the checkout info is too old: ask for a new one');
  }
}

/**
 * The RFC 8785 text of a checkout info this platform made, written member by member in their
 * canonical (UTF-16) order, which the schemas' member lists give once: the same text as
 * `canonicalize` (a property test compares them) in a third of its time, which a checkout info
 * pays on every request. Members a value leaves out (optional ones) are skipped; free-form values
 * (the customer, payment methods, violations) go through `canonicalize`. Verification, which must
 * accept any JSON a client sends back, always uses `canonicalize`.
 *
 * Line items, most of the text, are copied into objects whose members come in canonical order and
 * written by JSON.stringify, which writes strings and numbers as RFC 8785 does, skips undefined
 * members, and is native code (twice as fast as writing them member by member here).
 */
type MemberOrder = ReadonlyArray<readonly [key: string, quoted: string]>;
const orderOf = (shape: object): MemberOrder => Object.keys(shape).sort().map((key) => [key, JSON.stringify(key)] as const);
const InfoMembers = orderOf(CheckoutInfo.shape);
const ShopMembers = orderOf(ShopInformation.shape);
const PriceMembers = orderOf(Price.shape);

/** A line item with its members in canonical order (the list below is checked against the schema by a test). */
export function inCanonicalOrder(l: LineItem): LineItem {
  return {
    amount: l.amount,
    couponID: l.couponID,
    discountID: l.discountID,
    discountPercentage: l.discountPercentage,
    discountRuleID: l.discountRuleID,
    discountType: l.discountType,
    discountValue: l.discountValue,
    fulfillmentType: l.fulfillmentType,
    id: l.id,
    name: l.name,
    price: l.price,
    priceModifiers: l.priceModifiers?.map((m) => ({ action: m.action, method: m.method, name: m.name, percentage: m.percentage, price: m.price, ruleID: m.ruleID })),
    priceOrigin: l.priceOrigin,
    redeemed: l.redeemed,
    referenceUnit: l.referenceUnit,
    refersTo: l.refersTo,
    saleRestriction: l.saleRestriction,
    scannedCode: l.scannedCode,
    sku: l.sku,
    taxRate: l.taxRate,
    totalPrice: l.totalPrice,
    type: l.type,
    units: l.units,
    weight: l.weight,
    weightUnit: l.weightUnit,
  };
}

export function canonicalCheckoutInfo(info: CheckoutInfo): string {
  return members(info, InfoMembers, (key, value) => {
    switch (key) {
      case 'lineItems':
        return lineItemsText(value as LineItem[]);
      case 'price':
        return members(value as Record<string, unknown>, PriceMembers, (_, v) => (typeof v === 'number' ? int(v) : perRate(v as Record<string, number>)));
      case 'shop':
        return members(value as Record<string, unknown>, ShopMembers, scalar);
      default:
        return scalar(key, value);
    }
  });
}

function lineItemsText(lines: readonly LineItem[]): string {
  const ordered = lines.map(inCanonicalOrder);
  const text = JSON.stringify(ordered);
  // Where JSON.stringify and RFC 8785 part: a number that is not finite (written as null), a lone
  // surrogate (escaped as \udxxx; only it and control characters get a \u escape). Such lines are
  // canonicalize's to refuse.
  if (text.includes('\\u') || !lines.every(finiteNumbers)) {
    if (canonicalize(ordered) !== text) throw new TypeError('a line item without a canonical form');
  }
  return text;
}

function finiteNumbers(l: LineItem): boolean {
  const modifiers = l.priceModifiers?.reduce((sum, m) => sum + m.price + (m.percentage ?? 0), 0) ?? 0;
  // A sum of finite numbers of the size of prices is finite; one NaN or Infinity makes it not.
  return Number.isFinite(l.amount + l.weight + l.units + l.price + l.totalPrice + (l.discountValue ?? 0) + (l.discountPercentage ?? 0) + modifiers);
}

function members(record: object, order: MemberOrder, write: (key: string, value: unknown) => string): string {
  let text = '';
  for (const [key, quoted] of order) {
    const value = (record as Record<string, unknown>)[key];
    if (value !== undefined) text += `${text ? ',' : '{'}${quoted}:${write(key, value)}`;
  }
  return text ? `${text}}` : '{}';
}

function scalar(_key: string, value: unknown): string {
  if (typeof value === 'string') return text(value);
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  if (value === null) return 'null';
  if (typeof value === 'boolean') return String(value);
  const canonical = canonicalize(value);
  if (canonical === undefined) throw new TypeError('a value without a JSON form');
  return canonical;
}

function perRate(map: Record<string, number>): string {
  return `{${Object.keys(map)
    .sort()
    .map((rate) => `${text(rate)}:${int(map[rate] as number)}`)
    .join(',')}}`;
}

/** As canonicalize writes a string: JSON.stringify, refusing lone surrogates. */
function text(value: string): string {
  if (!value.isWellFormed()) throw new TypeError('a string with a lone surrogate has no canonical form');
  return JSON.stringify(value);
}

function int(value: number): string {
  if (!Number.isSafeInteger(value)) throw new TypeError('amounts are safe integers');
  return String(value);
}
