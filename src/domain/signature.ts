import { createHmac, timingSafeEqual } from 'node:crypto';
import canonicalize from 'canonicalize';
import { CheckoutInfo, Price, ShopInformation, type LineItem, type SignedCheckoutInfo } from '../../subjects/checkout.js';
import type { PriceModifier } from '../../subjects/promotions.js';
import { AppError } from '../errors.js';
import { JsonBytes } from './json-bytes.js';

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
function hmac(key: Uint8Array, header: string, canonical: Uint8Array): Buffer {
  const bytes = Buffer.from(canonical.buffer, canonical.byteOffset, canonical.length);
  return createHmac('sha256', key).update(header).update('.').update(bytes.toString('base64url')).digest();
}

export function signCheckoutInfo(info: CheckoutInfo, key: Uint8Array): string {
  scratch.reset();
  writeInfo(scratch, info);
  return signatureOf(key, scratch.bytes());
}

function signatureOf(key: Uint8Array, canonical: Uint8Array): string {
  return `${Header}..${hmac(key, Header, canonical).toString('base64url')}`;
}

const ReplyHead = Buffer.from('{"checkoutInfo":');
const SignatureMember = Buffer.from(',"signature":"');
const LinksMember = Buffer.from('","links":');

/**
 * The signed checkout info as JSON (a SignedCheckoutInfo), ready to send: its checkoutInfo is the
 * canonical JSON the signature covers, so the canonical bytes are written once, signed where they
 * are, and the answer is written around them.
 */
export function signedCheckoutInfoJson(info: CheckoutInfo, key: Uint8Array, links: SignedCheckoutInfo['links']): Buffer {
  const w = scratch;
  w.reset();
  w.raw(ReplyHead);
  writeInfo(w, info);
  const signature = signatureOf(key, w.bytes(ReplyHead.length));
  w.raw(SignatureMember);
  w.json(signature);
  w.raw(LinksMember);
  w.json(JSON.stringify(links));
  w.char(0x7d);
  return Buffer.from(w.bytes());
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
 * canonical (UTF-16) order, which the schemas' member lists give once, straight into UTF-8 bytes
 * (json-bytes.ts): the same text as `canonicalize` (a property test compares them) in a fraction of
 * its time, which a checkout info pays on every request. Members a value leaves out (optional ones)
 * are skipped; free-form values (the customer, payment methods, violations) go through
 * `canonicalize`. Verification, which must accept any JSON a client sends back, always uses
 * `canonicalize`.
 *
 * Line items, most of the text, are written by writeLineItem, member by member.
 */
export function canonicalCheckoutInfo(info: CheckoutInfo): string {
  scratch.reset();
  writeInfo(scratch, info);
  return textOf(scratch.bytes());
}

/** One line item's canonical text (writeLineItem). */
export function lineItemText(l: LineItem): string {
  scratch.reset();
  writeLineItem(scratch, l);
  return textOf(scratch.bytes());
}

/** Every text is written here, then copied out: synchronously, so one writer serves every call. */
const scratch = new JsonBytes();

function textOf(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('utf8');
}

/** A member's name with its punctuation, as the first member of an object and as a later one. */
interface Member {
  key: string;
  first: Uint8Array;
  next: Uint8Array;
}
const member = (key: string): Member => ({ key, first: Buffer.from(`{${JSON.stringify(key)}:`), next: Buffer.from(`,${JSON.stringify(key)}:`) });
const orderOf = (shape: object): Member[] => Object.keys(shape).sort().map(member);
const InfoMembers = orderOf(CheckoutInfo.shape);
const ShopMembers = orderOf(ShopInformation.shape);
const PriceMembers = orderOf(Price.shape);

function writeInfo(w: JsonBytes, info: CheckoutInfo): void {
  members(w, info, InfoMembers, (key, value) => {
    switch (key) {
      case 'lineItems':
        return writeLineItems(w, value as LineItem[]);
      case 'price':
        return members(w, value as Record<string, unknown>, PriceMembers, (_, v) => (typeof v === 'number' ? int(w, v) : perRate(w, v as Record<string, number>)));
      case 'shop':
        return members(w, value as Record<string, unknown>, ShopMembers, (_, v) => scalar(w, v));
      default:
        return scalar(w, value);
    }
  });
}

function writeLineItems(w: JsonBytes, lines: readonly LineItem[]): void {
  w.char(0x5b);
  for (let i = 0; i < lines.length; i++) {
    if (i) w.char(0x2c);
    writeLineItem(w, lines[i]!);
  }
  w.char(0x5d);
}

// A line item's members, in canonical order (a test checks the list against the schema).
const L = Object.fromEntries(
  ['amount', 'couponID', 'discountID', 'discountPercentage', 'discountRuleID', 'discountType', 'discountValue', 'fulfillmentType', 'id', 'name', 'price', 'priceModifiers', 'priceOrigin', 'redeemed', 'referenceUnit', 'refersTo', 'saleRestriction', 'scannedCode', 'sku', 'taxRate', 'totalPrice', 'type', 'units', 'weight', 'weightUnit'].map((key) => [key, member(key).next]),
) as Record<keyof LineItem, Uint8Array>;
const FirstAmount = member('amount').first;
const M = Object.fromEntries(['method', 'name', 'percentage', 'price', 'ruleID'].map((key) => [key, member(key).next])) as Record<Exclude<keyof PriceModifier, 'action'>, Uint8Array>;
const FirstAction = member('action').first;
const Null = Buffer.from('null');
const True = Buffer.from('true');
const False = Buffer.from('false');

/** A line item: its members in canonical (UTF-16) order, the optional ones when set. */
function writeLineItem(w: JsonBytes, l: LineItem): void {
  w.raw(FirstAmount);
  w.number(l.amount);
  if (l.couponID !== undefined) str(w, L.couponID, l.couponID);
  if (l.discountID !== undefined) str(w, L.discountID, l.discountID);
  if (l.discountPercentage !== undefined) num(w, L.discountPercentage, l.discountPercentage);
  if (l.discountRuleID !== undefined) str(w, L.discountRuleID, l.discountRuleID);
  if (l.discountType !== undefined) str(w, L.discountType, l.discountType);
  if (l.discountValue !== undefined) num(w, L.discountValue, l.discountValue);
  if (l.fulfillmentType !== undefined) str(w, L.fulfillmentType, l.fulfillmentType);
  str(w, L.id, l.id);
  str(w, L.name, l.name);
  num(w, L.price, l.price);
  if (l.priceModifiers !== undefined) {
    w.raw(L.priceModifiers);
    w.char(0x5b);
    l.priceModifiers.forEach((m, i) => {
      if (i) w.char(0x2c);
      writeModifier(w, m);
    });
    w.char(0x5d);
  }
  str(w, L.priceOrigin, l.priceOrigin);
  if (l.redeemed !== undefined) {
    w.raw(L.redeemed);
    w.raw(l.redeemed === true ? True : False);
  }
  if (l.referenceUnit !== undefined) str(w, L.referenceUnit, l.referenceUnit);
  if (l.refersTo === null) {
    w.raw(L.refersTo);
    w.raw(Null);
  } else {
    str(w, L.refersTo, l.refersTo);
  }
  str(w, L.saleRestriction, l.saleRestriction);
  str(w, L.scannedCode, l.scannedCode);
  str(w, L.sku, l.sku);
  str(w, L.taxRate, l.taxRate);
  num(w, L.totalPrice, l.totalPrice);
  str(w, L.type, l.type);
  num(w, L.units, l.units);
  num(w, L.weight, l.weight);
  if (l.weightUnit !== undefined) str(w, L.weightUnit, l.weightUnit);
  w.char(0x7d);
}

function writeModifier(w: JsonBytes, m: PriceModifier): void {
  w.raw(FirstAction);
  w.string(checked(m.action));
  str(w, M.method, m.method);
  str(w, M.name, m.name);
  if (m.percentage !== undefined) num(w, M.percentage, m.percentage);
  num(w, M.price, m.price);
  str(w, M.ruleID, m.ruleID);
  w.char(0x7d);
}

/** A member that must be a string. */
function str(w: JsonBytes, name: Uint8Array, value: string): void {
  w.raw(name);
  w.string(checked(value));
}

function checked(value: string): string {
  if (typeof value !== 'string') throw new TypeError('a line item member that should be a string is not one');
  return value;
}

function num(w: JsonBytes, name: Uint8Array, value: number): void {
  w.raw(name);
  w.number(value);
}

function members(w: JsonBytes, record: object, order: readonly Member[], write: (key: string, value: unknown) => void): void {
  let first = true;
  for (const m of order) {
    const value = (record as Record<string, unknown>)[m.key];
    if (value === undefined) continue;
    w.raw(first ? m.first : m.next);
    first = false;
    write(m.key, value);
  }
  if (first) w.char(0x7b);
  w.char(0x7d);
}

function scalar(w: JsonBytes, value: unknown): void {
  if (typeof value === 'string') return w.string(value);
  if (typeof value === 'number' && Number.isSafeInteger(value)) return w.number(value);
  if (value === null) return w.raw(Null);
  if (typeof value === 'boolean') return w.raw(value ? True : False);
  const canonical = canonicalize(value);
  if (canonical === undefined) throw new TypeError('a value without a JSON form');
  w.json(canonical);
}

function perRate(w: JsonBytes, map: Record<string, number>): void {
  w.char(0x7b);
  Object.keys(map)
    .sort()
    .forEach((rate, i) => {
      if (i) w.char(0x2c);
      w.string(rate);
      w.char(0x3a);
      int(w, map[rate] as number);
    });
  w.char(0x7d);
}

function int(w: JsonBytes, value: number): void {
  if (!Number.isSafeInteger(value)) throw new TypeError('amounts are safe integers');
  w.number(value);
}
