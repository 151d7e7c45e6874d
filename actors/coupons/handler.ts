import { randomUUID } from 'node:crypto';
import { AppError } from '../../src/errors.js';
import { inTransaction, type Sql, type TransactionSql } from '../../src/infra/postgres.js';
import { textPage } from '../../src/messaging/text-parts.js';
import { route, type Route } from '../../src/messaging/worker.js';
import { coupons, type CouponEvent, type CouponInput, type StoredCoupon, type StoredImage } from '../../subjects/coupons.js';
import { eventSubject } from '../../subjects/events.js';
import { insertOutbox } from '../outbox/sql.js';
import { createCouponImagesActor } from './images.js';
import * as db from './sql.js';
import { scannableCodes, toCoupon, type Reader } from './views.js';

/** How many coupons a list page reads at most; the page ends earlier when its bytes are spent. */
const ListRows = 200;

/**
 * Coupons of a project: plain records with a strong ETag. A write that names an ETag (If-Match)
 * checks it in the statement that writes, so concurrent writers with one ETag cannot both win.
 * Every change writes its event to the outbox in its transaction.
 */
export function createCouponsActor(deps: { sql: Sql; eventsWritten?: () => void }): Route[] {
  const { sql } = deps;
  const written = () => deps.eventsWritten?.();

  return [
    route(coupons.list, async ({ project, after, maxBytes, ...reader }) => {
      const rows = await db.listCoupons(sql, project, after, ListRows);
      const toText = (row: db.ReadCouponRow) => JSON.stringify(toCoupon(project, row.id, row.doc, row.locale, reader));
      const { texts, next } = textPage(rows, ListRows, maxBytes, toText, (row) => row.seq);
      return { coupons: texts, next };
    }),

    route(coupons.get, async ({ project, id, ...reader }) => {
      const row = await db.findCoupon(sql, project, id);
      if (!row) throw notFound(id);
      return answer(row, reader);
    }),

    route(coupons.create, async ({ project, coupon, ...reader }) => {
      const id = coupon.id ?? randomUUID();
      const doc = await toStored(sql, project, coupon);
      const row = await inTransaction(sql, async (tx) => {
        const created = await db.insertCoupon(tx, project, id, doc);
        if (!created) throw AppError.conflict(`a coupon with id ${id} already exists`);
        await claimCodes(tx, created);
        await insertOutbox(tx, [changed(created, reader)]);
        return created;
      });
      written();
      return answer(row, reader);
    }),

    route(coupons.update, async ({ project, id, coupon, ifMatch, ...reader }) => {
      if (coupon.id !== undefined && coupon.id !== id) throw AppError.badRequest(`the body's id ${coupon.id} differs from the path's id ${id}`);
      const doc = await toStored(sql, project, coupon);
      const row = await inTransaction(sql, async (tx) => {
        const updated = await db.updateCoupon(tx, project, id, doc, ifMatch);
        if (!updated) throw await whyNotWritten(tx, project, id);
        await claimCodes(tx, updated);
        await insertOutbox(tx, [changed(updated, reader)]);
        return updated;
      });
      written();
      return answer(row, reader);
    }),

    route(coupons.delete, async ({ project, id, ifMatch }) => {
      await inTransaction(sql, async (tx) => {
        const version = await db.deleteCoupon(tx, project, id, ifMatch);
        if (version === undefined) throw await whyNotWritten(tx, project, id);
        const event: CouponEvent = { project, id, version: version + 1, at: new Date().toISOString(), event: 'deleted' };
        await insertOutbox(tx, [{ subject: eventSubject(project, 'coupon', id, 'deleted'), payload: event }]);
      });
      written();
      return null;
    }),

    ...createCouponImagesActor({ sql }),
  ];
}

function answer(row: db.ReadCouponRow, reader: Reader) {
  return { coupon: toCoupon(row.project, row.id, row.doc, row.locale, reader), etag: row.etag };
}

/** The event of a created or replaced coupon: the coupon as answered in the project's language. */
function changed(row: db.ReadCouponRow, reader: Reader) {
  const event: CouponEvent = {
    project: row.project,
    id: row.id,
    version: row.version,
    at: row.updated_at.toISOString(),
    event: 'changed',
    etag: row.etag,
    coupon: toCoupon(row.project, row.id, row.doc, row.locale, { baseUrl: reader.baseUrl }),
  };
  return { subject: eventSubject(row.project, 'coupon', row.id, 'changed'), payload: event };
}

/** A write that found nothing to write: the coupon is missing (404), or its ETag is another (412). */
async function whyNotWritten(tx: TransactionSql, project: string, id: string): Promise<AppError> {
  if (!(await db.couponExists(tx, project, id))) return notFound(id);
  return new AppError(412, 'precondition_failed', `the coupon ${id} has changed: If-Match does not name its current ETag`);
}

/** The coupon's scannable codes become its own; a code another coupon has is a conflict (and nothing is written). */
async function claimCodes(tx: TransactionSql, row: db.CouponRow): Promise<void> {
  const taken = await db.replaceCouponCodes(tx, row.project, row.id, scannableCodes(row.doc));
  const [first] = taken;
  if (first) throw AppError.conflict(`the code ${first.code} belongs to coupon ${first.coupon_id}${taken.length > 1 ? ` (and ${taken.length - 1} more codes to other coupons)` : ''}`);
}

/** The input as stored: without its id, image formats with their content type and size (they must be uploaded). */
async function toStored(sql: Sql, project: string, coupon: CouponInput): Promise<StoredCoupon> {
  const { id: _id, image, ...rest } = coupon;
  return { ...rest, image: image && (await resolveImage(sql, project, image)) };
}

async function resolveImage(sql: Sql, project: string, image: NonNullable<CouponInput['image']>): Promise<StoredImage> {
  const known = new Map((await db.findImages(sql, project, image.formats.map((f) => f.ref))).map((m) => [m.ref, m]));
  return {
    name: image.name,
    formats: image.formats.map((format, i) => {
      const meta = known.get(format.ref);
      if (!meta) throw AppError.badRequest(`image.formats.${i}.ref: no uploaded image ${format.ref} in this project`, [{ path: `image.formats.${i}.ref` }]);
      return { ref: format.ref, size: format.size, contentType: meta.content_type, width: meta.width, height: meta.height };
    }),
  };
}

function notFound(id: string): AppError {
  return AppError.notFound(`no coupon with id ${id}`);
}
