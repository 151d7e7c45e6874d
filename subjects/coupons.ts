import { z } from 'zod';
import { pathSafeId, ProjectId, SelfLinks } from './common.js';
import { endpoint, type Codec } from './contract.js';
import { findUnstorableText } from './formats/json.js';

/**
 * Coupons: the spec's Coupon plus what the public app SDKs decode (their coupon lists fail whole on
 * one coupon they cannot decode, so every answer carries every field they require), with a strong
 * ETag per coupon; and the images coupons show, content-addressed by the SHA-256 of their bytes.
 */

export const CouponId = pathSafeId('a coupon id').describe('Coupon id: given by the client (kept as given) or a generated UUID v4');
export const ImageRef = z.string().regex(/^[0-9a-f]{64}$/, 'an image ref is the 64 hex digits the upload answered').describe('SHA-256 of the image bytes, in hex');

export const Channel = z.enum(['app', 'sco']);
export const RedeemType = z.enum(['once-per-scanned-code', 'once-per-app-user-id', 'multiple']);
export const ProcessingType = z.enum(['custom', 'none', 'builtin']);

/**
 * The most JSON a coupon may be. Its answer holds its texts twice at most, and a list page holds
 * answers as JSON strings (escaping at most doubles them): one coupon always fits a message.
 */
export const MaxCouponBytes = 128 * 1024;
/** The largest image a coupon may show. */
export const MaxImageBytes = 5 * 1024 * 1024;

/** A language code as translation maps key it: de, de-DE, en_GB. */
const LanguageCode = z
  .string()
  .max(35)
  .regex(/^[A-Za-z]{1,8}(?:[-_][A-Za-z0-9]{1,8})*$/, 'a language code such as de or de-DE');

const Texts = (max: number) =>
  z
    .record(LanguageCode, z.string().max(max))
    .refine((texts) => Object.keys(texts).length <= 100, 'at most 100 languages')
    .describe('Language code → text');

export const Translations = z
  .object({
    name: Texts(500).default({}),
    description: Texts(10_000).default({}),
    promotionDescription: Texts(2000).optional().describe("This platform's addition: the SDKs' promotionDescription, per language"),
    disclaimer: Texts(10_000).optional().describe("This platform's addition: the SDKs' disclaimer, per language"),
  })
  .meta({ id: 'CouponTranslations' });

const HexColor = z.string().regex(/^#(?:[0-9A-Fa-f]{3}|[0-9A-Fa-f]{6}|[0-9A-Fa-f]{8})$/, 'a hex color such as #FFFFFF');
export const Colors = z
  .object({ background: HexColor.default('#FFFFFF'), foreground: HexColor.default('#000000') })
  .describe('Card colors in the apps (defaults white and black)');

export const CouponCode = z.object({
  code: z.string().min(1).max(128).describe('A code printed on the coupon; scanning it at checkout names this coupon'),
  template: z.string().min(1).max(64).default('default').describe('How the code is read (a code template name), default "default"'),
});

/** A format of an image as clients name it: the ref the upload answered, or the url a coupon answered. */
const ImageFormatInput = z
  .object({
    ref: ImageRef.optional(),
    url: z.string().max(2000).optional().describe('Instead of ref: the url of an uploaded image (a coupon answered as it came)'),
    size: z.string().min(1).max(32).default('xhdpi').describe('Resolution name the apps pick by: xxhdpi, xhdpi, hdpi, mdpi, ldpi, thumbnail'),
  })
  .transform((format, ctx) => {
    const ref = format.ref ?? refOfUrl(format.url);
    if (!ref) {
      ctx.addIssue({ code: 'custom', message: 'an image format needs the ref of an uploaded image', path: ['ref'] });
      return z.NEVER;
    }
    return { ref, size: format.size };
  });

export const ImageInput = z
  .object({
    ref: ImageRef.optional().describe('Shorthand for formats: [{ref}]'),
    size: z.string().min(1).max(32).optional().describe('With ref: its resolution name (default xhdpi)'),
    name: z.string().max(200).default(''),
    formats: z.array(ImageFormatInput).min(1).max(10).optional(),
  })
  .transform((image, ctx) => {
    if (image.formats && image.ref) ctx.addIssue({ code: 'custom', message: 'give ref or formats, not both', path: ['ref'] });
    const formats = image.formats ?? (image.ref ? [{ ref: image.ref, size: image.size ?? 'xhdpi' }] : undefined);
    if (!formats) {
      ctx.addIssue({ code: 'custom', message: 'an image needs ref or formats', path: ['ref'] });
      return z.NEVER;
    }
    return { name: image.name, formats };
  })
  .describe('An uploaded image: {ref} (one format, size xhdpi), or {name?, formats: [{ref, size}]} for several resolutions');

const DateTime = z.iso.datetime({ offset: true }).transform((time) => new Date(time).toISOString());

/**
 * A coupon as clients send it (create and replace). Response-only fields (projectID, name,
 * description, links) are ignored, so a coupon as answered may be sent back as it came; image
 * formats then name their image by url.
 */
export const CouponInput = z
  .object({
    id: CouponId.optional(),
    channels: z
      .array(Channel)
      .min(1)
      .refine((channels) => new Set(channels).size === channels.length, 'channels must not repeat'),
    type: z.string().min(1).max(64).describe('Kind of coupon: manual, printed, digital, ... (any text, stored as given)'),
    redeemType: RedeemType.nullish().transform((v) => v ?? null),
    processingType: ProcessingType.nullish().transform((v) => v ?? null),
    requiresLoyaltyCard: z.boolean().default(false),
    validFrom: DateTime.nullish().transform((v) => v ?? null).describe('RFC 3339; inclusive'),
    validUntil: DateTime.nullish().transform((v) => v ?? null).describe('RFC 3339; inclusive'),
    translations: Translations.default({ name: {}, description: {} }),
    additionalAttributes: z.record(z.string().max(200), z.json()).default({}).describe('Any JSON object, stored and returned whole'),
    code: z.string().min(1).max(128).nullish().transform((v) => v ?? null).describe('The code the apps show for the coupon; scanning it names the coupon too'),
    codes: z.array(CouponCode).max(100).default([]),
    colors: Colors.nullish().transform((v) => v ?? { background: '#FFFFFF', foreground: '#000000' }),
    image: ImageInput.nullish().transform((v) => v ?? null),
  })
  .superRefine((coupon, ctx) => {
    if (coupon.validFrom && coupon.validUntil && coupon.validFrom > coupon.validUntil) {
      ctx.addIssue({ code: 'custom', message: 'validFrom is after validUntil', path: ['validFrom'] });
    }
    const unstorable = findUnstorableText(coupon);
    if (unstorable) ctx.addIssue({ code: 'custom', message: unstorable.reason, path: unstorable.path });
    if (Buffer.byteLength(JSON.stringify(coupon)) > MaxCouponBytes) {
      ctx.addIssue({ code: 'custom', message: `a coupon is at most ${MaxCouponBytes / 1024} KB of JSON` });
    }
  })
  .meta({ id: 'CouponRequest' });
export type CouponInput = z.output<typeof CouponInput>;

/** A coupon as stored: the input without its id, image formats with what the upload learned. */
export type StoredCoupon = Omit<CouponInput, 'id' | 'image'> & { image: StoredImage | null };
export interface StoredImage {
  name: string;
  formats: Array<{ ref: string; size: string; contentType: string; width: number; height: number }>;
}

export const CouponImage = z
  .object({
    name: z.string(),
    formats: z
      .array(z.object({ size: z.string(), url: z.string(), contentType: z.string(), width: z.int(), height: z.int() }))
      .min(1),
  })
  .meta({ id: 'CouponImage' });

export const Coupon = z
  .object({
    id: CouponId,
    projectID: ProjectId,
    channels: z.array(Channel),
    type: z.string(),
    redeemType: RedeemType.nullable(),
    processingType: ProcessingType.nullable(),
    requiresLoyaltyCard: z.boolean(),
    validFrom: z.iso.datetime().nullable(),
    validUntil: z.iso.datetime().nullable(),
    translations: Translations,
    additionalAttributes: z.record(z.string(), z.unknown()),
    name: z.string().describe('From translations.name: the best match of Accept-Language, else the project language, else the first; else ""'),
    description: z.string().describe('From translations.description, picked as name'),
    promotionDescription: z.string().optional().describe('From translations.promotionDescription when it has texts'),
    disclaimer: z.string().optional().describe('From translations.disclaimer when it has texts'),
    code: z.string().nullable(),
    codes: z.array(z.object({ code: z.string(), template: z.string() })),
    colors: z.object({ background: z.string(), foreground: z.string() }),
    image: CouponImage.optional().describe('Absent when the coupon shows no image'),
    links: SelfLinks,
  })
  .meta({ id: 'Coupon' });
export type Coupon = z.infer<typeof Coupon>;

export const CouponAnswer = z.object({ coupon: Coupon, etag: z.string() });

export const ImageUploaded = z
  .object({ ref: ImageRef, contentType: z.string(), width: z.int(), height: z.int(), size: z.int(), created: z.boolean() })
  .meta({ id: 'CouponImageUploaded' });

export function couponPath(project: string, id: string): string {
  return `/${project}/coupons/${encodeURIComponent(id)}`;
}

export function imagePath(project: string, ref: string): string {
  return `/${project}/coupons/images/${ref}`;
}

function refOfUrl(url: string | undefined): string | undefined {
  return url ? /\/coupons\/images\/([0-9a-f]{64})(?:[?#].*)?$/.exec(url)?.[1] : undefined;
}


/** What the edge adds to each request: who reads, and where the images are served. */
const Reader = {
  acceptLanguage: z.string().max(1000).optional(),
  baseUrl: z.string().max(500).describe('Scheme and host image urls start with'),
};

const IfMatch = z.union([z.literal('*'), z.array(z.string().max(200)).max(50)]).describe('`*`, or the strong ETags of If-Match');
const CouponRef = z.object({ project: ProjectId, id: CouponId });

/** A part of an image: header JSON, a newline, then the raw bytes (no base64 on the way in). */
export const ImagePart = z.object({
  project: ProjectId,
  upload: z.uuid(),
  index: z.int().min(0).max(1000),
  data: z.custom<Uint8Array>((v) => v instanceof Uint8Array, 'the part\'s bytes'),
});
export type ImagePart = z.infer<typeof ImagePart>;

export const ImagePartCodec: Codec = {
  contentType: 'application/octet-stream',
  description: 'a JSON header line (the request without `data`), then the bytes of `data` as they are',
  encode(request) {
    const { data, ...header } = request as ImagePart;
    return Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`), data]);
  },
  decode(bytes) {
    const end = bytes.indexOf(0x0a);
    if (end < 0) throw new Error('an image part has no header line');
    const header = JSON.parse(Buffer.from(bytes.subarray(0, end)).toString('utf8')) as Record<string, unknown>;
    // A copy: the message's buffer is not ours to keep.
    return { ...header, data: Uint8Array.prototype.slice.call(bytes, end + 1) };
  },
};

export const coupons = {
  /** A page of the list in creation order after `after`, as JSON texts (a list of any length travels in parts). */
  list: endpoint(
    'svc.coupons.list',
    z.object({ project: ProjectId, after: z.string().regex(/^\d{1,19}$/).optional(), maxBytes: z.int().min(1024), ...Reader }),
    z.object({ coupons: z.array(z.string()), next: z.string().nullable() }),
    { repeatable: true },
  ),
  get: endpoint('svc.coupons.get', CouponRef.extend(Reader), CouponAnswer, { repeatable: true }),
  create: endpoint('svc.coupons.create', z.object({ project: ProjectId, coupon: CouponInput, ...Reader }), CouponAnswer),
  update: endpoint('svc.coupons.update', CouponRef.extend({ coupon: CouponInput, ifMatch: IfMatch, ...Reader }), CouponAnswer),
  delete: endpoint('svc.coupons.delete', CouponRef.extend({ ifMatch: IfMatch }), z.null()),
  /** An upload's parts but its last; any worker stores them for the last part to assemble. */
  imagePart: endpoint('svc.coupons.imagePart', ImagePart, z.null(), { codec: ImagePartCodec }),
  /** The last (or only) part of an upload: the image is checked, stored and named. */
  imageDone: endpoint('svc.coupons.imageDone', ImagePart, ImageUploaded, { codec: ImagePartCodec }),
  /** `length` bytes of an image from `offset`, base64 (0 bytes: what the image is). */
  imageRead: endpoint(
    'svc.coupons.imageRead',
    z.object({ project: ProjectId, ref: ImageRef, offset: z.int().min(0), length: z.int().min(0).max(1024 * 1024) }),
    z.object({ contentType: z.string(), size: z.int(), data: z.string().describe('base64') }),
    { repeatable: true },
  ),
};

export const CouponEvents = ['changed', 'deleted', 'redeemed'] as const;

const EventEnvelope = z.object({
  project: z.string(),
  id: z.string().describe('The coupon id'),
  version: z.int().describe('Counts the changes of the coupon (a deletion is one)'),
  at: z.iso.datetime(),
});

export const CouponEvent = z
  .discriminatedUnion('event', [
    EventEnvelope.extend({ event: z.literal('changed'), etag: z.string(), coupon: Coupon.describe('As answered, in the project language') }),
    EventEnvelope.extend({ event: z.literal('deleted') }),
    z.object({
      project: z.string(),
      id: z.string().describe('The coupon id'),
      at: z.iso.datetime(),
      event: z.literal('redeemed'),
      processID: z.string().describe('The checkout process that redeemed it, as it succeeded'),
      redeemed: z.boolean().describe('false: another process redeemed it first under the same key (a once-only coupon); this one was not'),
      redemptionKey: z.string().describe('What made the redemption unique: code:<scanned code>, user:<appUserID>, or process:<id> (multiple)'),
    }),
  ])
  .meta({ id: 'CouponEvent' });
export type CouponEvent = z.infer<typeof CouponEvent>;
