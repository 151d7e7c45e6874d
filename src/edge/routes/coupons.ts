import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import multipart from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { Coupon, CouponId, CouponInput, coupons, ImageRef, ImageUploaded, imagePath, MaxImageBytes } from '../../../subjects/coupons.js';
import { AppError } from '../../errors.js';
import type { ServiceClient } from '../../messaging/client.js';
import { documentedBody, EmptyBody, ErrorResponses, ProjectParams, type ZodApp } from '../schemas.js';
import { inParts, jsonArray } from '../streams.js';

const CouponParams = ProjectParams.extend({ couponID: CouponId });
const tags = ['coupons'];
// The spec wraps errors of the coupon family as {error: {type, message}}.
const read = { auth: { permissions: ['couponsRead'] }, errorEnvelope: 'wrapped' } as const;
const write = { auth: { permissions: ['couponsWrite'] }, errorEnvelope: 'wrapped' } as const;

const IfMatchHeaders = z.object({ 'if-match': z.string().optional().describe('The coupon\'s ETag (or `*`: any existing coupon); required') });
const Negotiated = 'ETag names the stored coupon; name and description follow Accept-Language (Vary: Accept-Language).';
const ImageTypes = ['image/png', 'image/jpeg', 'image/webp', 'image/gif'];

export interface CouponRouteOptions {
  /** Scheme, host and prefix of image urls (PUBLIC_BASE_URL); unset: the request's own. */
  publicBaseUrl?: string | undefined;
}

export function couponRoutes(app: ZodApp, client: ServiceClient, options: CouponRouteOptions = {}): void {
  const reader = (request: FastifyRequest) => ({
    acceptLanguage: request.headers['accept-language']?.slice(0, 1000),
    baseUrl: options.publicBaseUrl ?? requestBase(request),
  });

  app.get(
    '/:project/coupons',
    {
      config: read,
      schema: {
        tags,
        summary: 'List the coupons of the project, in the order they were created',
        description: 'Streams `{coupons: [...]}`: the list is read in parts and never held whole.',
        params: ProjectParams,
        response: { 200: z.object({ coupons: z.array(Coupon) }), ...ErrorResponses },
      },
    },
    async (request, reply) => {
      const { project } = request.params;
      const maxBytes = client.maxPayload() - 16 * 1024;
      const page = async (after: string | undefined) => {
        const part = await client.call(coupons.list, { project, after, maxBytes, ...reader(request) });
        return { items: part.coupons, next: part.next };
      };
      // The first part is read before answering, so that its errors still get their status.
      const items = inParts(await page(undefined), Infinity, page);
      reply.header('vary', 'Accept-Language').type('application/json');
      return reply.send(Readable.from(jsonArray(items, '{"coupons":[', ']}')) as never);
    },
  );

  app.get(
    '/:project/coupons/:couponID',
    {
      config: read,
      schema: {
        tags,
        summary: 'Get a coupon, with its ETag',
        description: `304 without a body when If-None-Match names its ETag. ${Negotiated}`,
        params: CouponParams,
        response: { 200: Coupon, 304: EmptyBody, ...ErrorResponses },
      },
    },
    async (request, reply) => {
      const { project, couponID: id } = request.params;
      const { coupon, etag } = await client.call(coupons.get, { project, id, ...reader(request) });
      reply.header('etag', etag).header('vary', 'Accept-Language');
      if (noneMatch(request.headers['if-none-match'], etag)) return reply.code(304).send('');
      return coupon;
    },
  );

  app.post(
    '/:project/coupons',
    {
      config: { ...write, idempotent: true },
      schema: {
        tags,
        summary: 'Create a coupon; its id is kept when the body gives one, else a UUID v4 is generated',
        description: `201 with Location and ETag. An id that exists, or a code another coupon has, is 409 \`conflict\`. ${Negotiated}`,
        params: ProjectParams,
        body: CouponInput,
        response: { 201: Coupon, ...ErrorResponses },
      },
    },
    async (request, reply) => {
      const { coupon, etag } = await client.call(coupons.create, { project: request.params.project, coupon: request.body, ...reader(request) });
      return reply.code(201).header('location', coupon.links.self.href).header('etag', etag).header('vary', 'Accept-Language').send(coupon);
    },
  );

  app.put(
    '/:project/coupons/:couponID',
    {
      config: write,
      schema: {
        tags,
        summary: 'Replace a coupon; If-Match is required',
        description:
          'If-Match missing: 428 `precondition_required`. Not the current ETag: 412 `precondition_failed` and nothing changes; `*` matches any existing coupon. ' +
          `Of clients replacing with the same ETag at once, exactly one succeeds. Answers the coupon with its new ETag. ${Negotiated}`,
        params: CouponParams,
        headers: IfMatchHeaders,
        body: CouponInput,
        response: { 200: Coupon, ...ErrorResponses },
      },
    },
    async (request, reply) => {
      const { project, couponID: id } = request.params;
      const ifMatch = requiredIfMatch(request.headers['if-match']);
      const { coupon, etag } = await client.call(coupons.update, { project, id, coupon: request.body, ifMatch, ...reader(request) });
      return reply.header('etag', etag).header('vary', 'Accept-Language').send(coupon);
    },
  );

  app.delete(
    '/:project/coupons/:couponID',
    {
      config: write,
      schema: {
        tags,
        summary: 'Delete a coupon; If-Match is required',
        description: '204. If-Match missing: 428 `precondition_required`; not the current ETag: 412 `precondition_failed`; `*` matches any existing coupon.',
        params: CouponParams,
        headers: IfMatchHeaders,
        response: { 204: EmptyBody, ...ErrorResponses },
      },
    },
    async (request, reply) => {
      const { project, couponID: id } = request.params;
      await client.call(coupons.delete, { project, id, ifMatch: requiredIfMatch(request.headers['if-match']) });
      return reply.code(204).send('');
    },
  );

  app.get(
    '/:project/coupons/images/:ref',
    {
      config: { auth: 'public', errorEnvelope: 'wrapped' },
      schema: {
        tags,
        summary: 'An uploaded coupon image, with its content type; public (no token)',
        description:
          'Public, because app image loaders send no token: the ref is the SHA-256 of the bytes, unguessable without the image. ' +
          'Cached for a year (`Cache-Control: public, max-age=31536000, immutable`): the bytes of a ref never change. ETag `"<ref>"`; If-None-Match: 304.',
        security: [],
        params: ProjectParams.extend({ ref: ImageRef }),
        response: { 200: z.string().describe('The image bytes'), 304: EmptyBody, ...ErrorResponses },
      },
    },
    async (request, reply) => {
      const { project, ref } = request.params;
      const etag = `"${ref}"`;
      // Cross-origin: apps and web pages of other origins show the images (helmet's default is same-origin).
      reply.header('etag', etag).header('cache-control', 'public, max-age=31536000, immutable').header('cross-origin-resource-policy', 'cross-origin');
      if (noneMatch(request.headers['if-none-match'], etag)) {
        await client.call(coupons.imageRead, { project, ref, offset: 0, length: 0 }); // 404 for an image this project does not have
        return reply.code(304).send('');
      }
      const length = readPartBytes(client);
      const first = await client.call(coupons.imageRead, { project, ref, offset: 0, length }, ImageCall);
      const head = Buffer.from(first.data, 'base64');
      reply.type(first.contentType).header('content-length', first.size);
      if (head.length >= first.size) return reply.send(head as never);
      const rest = async function* () {
        yield head;
        for (let offset = head.length; offset < first.size; ) {
          const part = Buffer.from((await client.call(coupons.imageRead, { project, ref, offset, length }, ImageCall)).data, 'base64');
          if (!part.length) throw new Error(`image ${ref} ended before its size`);
          yield part;
          offset += part.length;
        }
      };
      return reply.send(Readable.from(rest()) as never);
    },
  );

  // Multipart and image bodies are parsed for the upload route only: elsewhere they stay 415.
  app.register(async (scope) => {
    await scope.register(multipart, { limits: { fileSize: MaxImageBytes, files: 1, fields: 20, parts: 40 } });
    scope.addContentTypeParser(/^image\/[\w.+-]+$/i, { parseAs: 'buffer', bodyLimit: MaxImageBytes }, (_request, body, done) => done(null, body));
    scope.withTypeProvider<ZodTypeProvider>().post(
      '/:project/coupons/images',
      {
        config: write,
        schema: {
          tags,
          summary: 'Upload a coupon image: multipart/form-data with the file in the field `file`, or the raw body with an image/* content type',
          description:
            'PNG, JPEG, WebP or GIF, recognised by the bytes (a declared type is not trusted): anything else is 415 `unsupported_media_type`; over 5 MB, 413 `payload_too_large`. ' +
            'Answers `{ref}` (with contentType, width, height, size): 201 for a new image, 200 when the project has these bytes already (the ref is their SHA-256). ' +
            'A coupon shows it with `image: {ref}` or `image: {formats: [{ref, size}]}`.',
          consumes: ['multipart/form-data', ...ImageTypes],
          params: ProjectParams,
          body: documentedBody(
            z.object({ file: z.string().meta({ format: 'binary' }) }).describe('multipart/form-data: the image in the field `file`; image/*: the body is the image bytes themselves'),
          ),
          response: { 200: ImageUploaded.omit({ created: true }), 201: ImageUploaded.omit({ created: true }), ...ErrorResponses },
        },
      },
      async (request, reply) => {
        const { project } = request.params;
        const { created, ...image } = await uploadImage(client, project, await uploadedBytes(request));
        return reply.code(created ? 201 : 200).header('location', imagePath(project, image.ref)).send(image);
      },
    );
  });
}

/** The upload's bytes: the multipart field `file`, or the raw image body. */
async function uploadedBytes(request: FastifyRequest): Promise<Buffer> {
  if (Buffer.isBuffer(request.body)) return request.body;
  if (!request.isMultipart()) {
    throw new AppError(415, 'unsupported_media_type', 'send the image as multipart/form-data (field file) or as the raw body with an image/* content type');
  }
  try {
    const file = await request.file();
    if (!file) throw AppError.badRequest('the multipart body has no file: send the image in the field "file"');
    if (file.fieldname !== 'file') throw AppError.badRequest(`the image goes in the field "file", not "${file.fieldname}"`);
    const bytes = await file.toBuffer();
    // busboy may mark the cut only after the last chunk was read: a file at the limit is checked here.
    if (file.file.truncated) throw Object.assign(new Error('request file too large'), { code: 'FST_REQ_FILE_TOO_LARGE' });
    return bytes;
  } catch (err) {
    throw multipartError(err);
  }
}

const LimitCodes = new Set(['FST_REQ_FILE_TOO_LARGE', 'FST_PARTS_LIMIT', 'FST_FILES_LIMIT', 'FST_FIELDS_LIMIT']);

function multipartError(err: unknown): unknown {
  if (err instanceof AppError) return err;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && LimitCodes.has(code)) {
    return new AppError(413, 'payload_too_large', code === 'FST_REQ_FILE_TOO_LARGE' ? `an image is at most ${MaxImageBytes / 1024 / 1024} MB` : 'too many parts in the multipart body');
  }
  const status = (err as { statusCode?: unknown }).statusCode;
  if (typeof status === 'number' && status < 500) return AppError.badRequest(`the multipart body cannot be read: ${(err as Error).message}`);
  return err;
}

/** A part of an image is up to a megabyte for Postgres to take: more time than a plain request. */
const ImageCall = { timeoutMs: 30_000 };

/**
 * Sends an image to the workers in parts that fit a message, one after another (the first part's
 * worker refuses a file of another format before the rest travels); the last part's worker joins
 * them, checks and stores the image.
 */
async function uploadImage(client: ServiceClient, project: string, bytes: Buffer) {
  const size = Math.max(64 * 1024, client.maxPayload() - 16 * 1024);
  const parts: Buffer[] = [];
  for (let at = 0; at < bytes.length || parts.length === 0; at += size) parts.push(bytes.subarray(at, at + size));
  const upload = randomUUID();
  const last = parts.length - 1;
  for (let index = 0; index < last; index++) await client.call(coupons.imagePart, { project, upload, index, data: parts[index]! }, ImageCall);
  return client.call(coupons.imageDone, { project, upload, index: last, data: parts[last]! }, ImageCall);
}

/** Raw bytes per read reply: base64 (4 per 3) plus a little JSON must fit a message. */
function readPartBytes(client: ServiceClient): number {
  return Math.min(1024 * 1024, Math.floor(((client.maxPayload() - 4096) * 3) / 4 / 3) * 3);
}

/** The request's own scheme and host, for absolute image urls when PUBLIC_BASE_URL is unset. */
function requestBase(request: FastifyRequest): string {
  const host = request.host;
  return /^[A-Za-z0-9.-]+(?::\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](?::\d{1,5})?$/.test(host) ? `${request.protocol}://${host}` : '';
}

/** The opaque parts of an If-Match / If-None-Match list (`W/"x"` and `x` both give `x`), or `*`. */
function entityTags(header: string): '*' | Array<{ tag: string; weak: boolean }> {
  if (header.trim() === '*') return '*';
  return header
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)
    .map((item) => {
      const weak = item.startsWith('W/');
      return { tag: (weak ? item.slice(2) : item).replace(/^"(.*)"$/, '$1'), weak };
    });
}

/** If-Match for a write: required (428); its strong tags (a weak one never matches), as stored. */
function requiredIfMatch(header: string | undefined): '*' | string[] {
  if (header === undefined || !header.trim()) {
    throw new AppError(428, 'precondition_required', 'If-Match is required: send the ETag the coupon was answered with (or * for any)');
  }
  const tags = entityTags(header);
  return tags === '*' ? '*' : tags.filter((t) => !t.weak).map((t) => `"${t.tag}"`).slice(0, 50);
}

/** Whether If-None-Match names `etag` (weak comparison, as RFC 9110 says for GET). */
function noneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const tags = entityTags(header);
  return tags === '*' || tags.some((t) => `"${t.tag}"` === etag);
}
