import { createHmac, timingSafeEqual } from 'node:crypto';
import canonicalize from 'canonicalize';
import { CheckoutInfo, Price, ShopInformation, type LineItem, type SignedCheckoutInfo } from '../../subjects/checkout.js';
import type { PriceModifier } from '../../subjects/promotions.js';
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
  return signatureOf(key, Buffer.from(canonicalCheckoutInfo(info)));
}

function signatureOf(key: Uint8Array, canonical: Buffer): string {
  return `${Header}..${hmac(key, Header, canonical).toString('base64url')}`;
}

const ReplyHead = '{"checkoutInfo":';
const SignatureMember = ',"signature":"';
/** Every signature's length: the header, the empty payload and the 43 base64url characters of a 32-byte MAC. */
const SignatureLength = Header.length + 2 + 43;

/**
 * The signed checkout info as JSON (a SignedCheckoutInfo), ready to send: its checkoutInfo is the
 * canonical JSON the signature covers, so the text is written once, straight into the one buffer
 * of the answer, and signed there. A copy of the canonical text in a buffer of its own, then
 * joined with the rest, cost a checkout info with promotion lines (past the 4 KB that Buffer takes
 * from its pool) about as much as writing the text.
 */
export function signedCheckoutInfoJson(info: CheckoutInfo, key: Uint8Array, links: SignedCheckoutInfo['links']): Buffer {
  const canonical = canonicalCheckoutInfo(info);
  const tail = `","links":${JSON.stringify(links)}}`;
  const json = Buffer.allocUnsafe(ReplyHead.length + Buffer.byteLength(canonical) + SignatureMember.length + SignatureLength + Buffer.byteLength(tail));
  let at = json.write(ReplyHead, 0, 'latin1');
  at += json.write(canonical, at, 'utf8');
  const signature = signatureOf(key, json.subarray(ReplyHead.length, at));
  at += json.write(SignatureMember, at, 'latin1');
  at += json.write(signature, at, 'latin1');
  at += json.write(tail, at, 'utf8');
  // Every byte is written (allocUnsafe leaves old memory): the lengths above are exact.
  if (at !== json.length || signature.length !== SignatureLength) throw new Error('the signed checkout info was not written whole');
  return json;
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
 * Line items, most of the text, are written by lineItemText, member by member.
 */
type MemberOrder = ReadonlyArray<readonly [key: string, quoted: string]>;
const orderOf = (shape: object): MemberOrder => Object.keys(shape).sort().map((key) => [key, JSON.stringify(key)] as const);
const InfoMembers = orderOf(CheckoutInfo.shape);
const ShopMembers = orderOf(ShopInformation.shape);
const PriceMembers = orderOf(Price.shape);

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
  let text = '[';
  for (let i = 0; i < lines.length; i++) text += i ? `,${lineItemText(lines[i]!)}` : lineItemText(lines[i]!);
  return `${text}]`;
}

/**
 * A line item's canonical text: its members in canonical (UTF-16) order, the optional ones when
 * set, written with template strings (a test checks the list against the schema). Twice as fast as
 * JSON.stringify of a copy in canonical order; a checkout info writes each of its lines once.
 */
export function lineItemText(l: LineItem): string {
  let t = `{"amount":${num(l.amount)}`;
  if (l.couponID !== undefined) t += `,"couponID":${str(l.couponID)}`;
  if (l.discountID !== undefined) t += `,"discountID":${str(l.discountID)}`;
  if (l.discountPercentage !== undefined) t += `,"discountPercentage":${num(l.discountPercentage)}`;
  if (l.discountRuleID !== undefined) t += `,"discountRuleID":${str(l.discountRuleID)}`;
  if (l.discountType !== undefined) t += `,"discountType":${str(l.discountType)}`;
  if (l.discountValue !== undefined) t += `,"discountValue":${num(l.discountValue)}`;
  if (l.fulfillmentType !== undefined) t += `,"fulfillmentType":${str(l.fulfillmentType)}`;
  t += `,"id":${str(l.id)},"name":${str(l.name)},"price":${num(l.price)}`;
  if (l.priceModifiers !== undefined) t += `,"priceModifiers":[${l.priceModifiers.map(modifierText).join(',')}]`;
  t += `,"priceOrigin":${str(l.priceOrigin)}`;
  if (l.redeemed !== undefined) t += `,"redeemed":${l.redeemed === true}`;
  if (l.referenceUnit !== undefined) t += `,"referenceUnit":${str(l.referenceUnit)}`;
  t += `,"refersTo":${l.refersTo === null ? 'null' : str(l.refersTo)},"saleRestriction":${str(l.saleRestriction)},"scannedCode":${str(l.scannedCode)}`;
  t += `,"sku":${str(l.sku)},"taxRate":${str(l.taxRate)},"totalPrice":${num(l.totalPrice)},"type":${str(l.type)},"units":${num(l.units)},"weight":${num(l.weight)}`;
  if (l.weightUnit !== undefined) t += `,"weightUnit":${str(l.weightUnit)}`;
  return `${t}}`;
}

function modifierText(m: PriceModifier): string {
  const percentage = m.percentage === undefined ? '' : `,"percentage":${num(m.percentage)}`;
  return `{"action":${str(m.action)},"method":${str(m.method)},"name":${str(m.name)}${percentage},"price":${num(m.price)},"ruleID":${str(m.ruleID)}}`;
}

/** A line item member that must be a string, as text() writes it. */
function str(value: string): string {
  if (typeof value !== 'string') throw new TypeError('a line item member that should be a string is not one');
  return text(value);
}

/** A number as RFC 8785 (and JSON.stringify) writes it: the shortest text that reads back as the same number. */
function num(value: number): string {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new TypeError('a line item number without a JSON form');
  return `${value}`;
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

/** What a JSON string escapes (and lone surrogates, which have no canonical form). */
// eslint-disable-next-line no-control-regex -- control characters are what it looks for
const NeedsEscape = /["\\\u0000-\u001f\ud800-\udfff]/;

/** As canonicalize writes a string: as it is when it needs no escape, else JSON.stringify, refusing lone surrogates. */
function text(value: string): string {
  if (!NeedsEscape.test(value)) return `"${value}"`;
  if (!value.isWellFormed()) throw new TypeError('a string with a lone surrogate has no canonical form');
  return JSON.stringify(value);
}

function int(value: number): string {
  if (!Number.isSafeInteger(value)) throw new TypeError('amounts are safe integers');
  return String(value);
}
