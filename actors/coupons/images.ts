import { createHash } from 'node:crypto';
import { formatOf, FormatSignatureBytes, ImageFormats, readImage } from '../../src/domain/coupons/images.js';
import { AppError } from '../../src/errors.js';
import type { Sql } from '../../src/infra/postgres.js';
import { route, type Route } from '../../src/messaging/worker.js';
import { coupons, MaxImageBytes } from '../../subjects/coupons.js';
import * as db from './images.sql.js';

/**
 * Coupon images. An image larger than one message comes in parts: every part but the last is
 * stored by whichever worker gets it; the last part's worker joins them, checks the whole file and
 * stores it under the SHA-256 of its bytes. Reads answer a slice at a time, so any image travels.
 */
export function createCouponImagesActor(deps: { sql: Sql }): Route[] {
  const { sql } = deps;
  return [
    route(coupons.imagePart, async ({ project, upload, index, data }) => {
      // The first part shows the format: anything else is refused before the rest travels.
      if (index === 0) checkFormat(data);
      await db.insertImagePart(sql, project, upload, index, data);
      return null;
    }),

    route(coupons.imageDone, async ({ project, upload, index, data }) => {
      if (index === 0) return store(sql, project, data, { bytes: data });
      await db.insertImagePart(sql, project, upload, index, data);
      const joined = await db.readUpload(sql, project, upload);
      if (joined.parts !== index + 1) throw AppError.badRequest(`the upload has ${joined.parts} of its ${index + 1} parts`);
      return store(sql, project, joined.bytes, { upload });
    }),

    route(coupons.imageRead, async ({ project, ref, offset, length }) => {
      const slice = await db.readImageSlice(sql, project, ref, offset, length);
      if (!slice) throw AppError.notFound(`no image ${ref}`);
      return { contentType: slice.content_type, size: slice.size, data: Buffer.from(slice.data).toString('base64') };
    }),
  ];
}

async function store(sql: Sql, project: string, bytes: Uint8Array, from: { bytes: Uint8Array } | { upload: string }) {
  if (bytes.length > MaxImageBytes) throw new AppError(413, 'payload_too_large', `an image is at most ${MaxImageBytes / 1024 / 1024} MB`);
  checkFormat(bytes);
  const info = readImage(bytes);
  if (!info) throw unsupported(`the file is not a readable ${formatOf(bytes)!.toUpperCase()} image (its header is cut short or broken)`);
  const ref = createHash('sha256').update(bytes).digest('hex');
  const image = { project, ref, contentType: info.contentType, width: info.width, height: info.height, size: bytes.length };
  const created = await sql.begin(async (tx) => {
    const isNew = await db.insertImage(tx, image, from);
    if ('upload' in from) await db.dropUploadParts(tx, from.upload);
    return isNew;
  });
  return { ref, contentType: image.contentType, width: image.width, height: image.height, size: image.size, created };
}

function checkFormat(bytes: Uint8Array): void {
  if (!formatOf(bytes.subarray(0, FormatSignatureBytes))) {
    throw unsupported(`the file is none of ${Object.values(ImageFormats).join(', ')} (recognised by its bytes, whatever its declared type)`);
  }
}

function unsupported(message: string): AppError {
  return new AppError(415, 'unsupported_media_type', message);
}
