import type { Sql, TransactionSql } from '../../src/infra/postgres.js';

type Db = Sql | TransactionSql;

/** Uploads whose last part never came (the edge stopped, the client went away) are dropped after this. */
const StaleUploadAge = '1 hour';

export async function insertImagePart(db: Db, project: string, upload: string, index: number, bytes: Uint8Array): Promise<void> {
  await db`
    insert into coupon_image_parts (upload, index, project, bytes) values (${upload}, ${index}, ${project}, ${bytes})
    on conflict (upload, index) do update set bytes = excluded.bytes`;
}

/** The parts of an upload so far, joined in order, and how many there are. */
export async function readUpload(db: Db, project: string, upload: string): Promise<{ parts: number; bytes: Uint8Array }> {
  const [row] = await db<{ parts: number; bytes: Uint8Array | null }[]>`
    select count(*)::int as parts, string_agg(bytes, ''::bytea order by index) as bytes
    from coupon_image_parts where upload = ${upload} and project = ${project}`;
  return { parts: row!.parts, bytes: row!.bytes ?? new Uint8Array() };
}

export interface NewImage {
  project: string;
  ref: string;
  contentType: string;
  width: number;
  height: number;
  size: number;
}

/**
 * Stores an image under its ref (the same bytes are the same image: a repeat stores nothing),
 * from `bytes`, or from the parts of `upload`. True when it is new.
 */
export async function insertImage(db: Db, image: NewImage, from: { bytes: Uint8Array } | { upload: string }): Promise<boolean> {
  const { project, ref, contentType, width, height, size } = image;
  const bytes = 'bytes' in from ? db`${from.bytes}::bytea` : db`(select string_agg(bytes, ''::bytea order by index) from coupon_image_parts where upload = ${from.upload})`;
  const rows = await db`
    insert into coupon_images (project, ref, content_type, width, height, size, bytes)
    select ${project}, ${ref}, ${contentType}, ${width}, ${height}, ${size}, ${bytes}
    on conflict (project, ref) do nothing
    returning 1`;
  return rows.length === 1;
}

/** Drops an upload's parts, and those of uploads nobody finished. */
export async function dropUploadParts(db: Db, upload: string): Promise<void> {
  await db`delete from coupon_image_parts where upload = ${upload} or created_at < now() - ${StaleUploadAge}::interval`;
}

export interface ImageSlice {
  content_type: string;
  size: number;
  data: Uint8Array;
}

/** `length` bytes of an image from `offset` (storage external: only those are read). */
export async function readImageSlice(db: Db, project: string, ref: string, offset: number, length: number): Promise<ImageSlice | undefined> {
  const [row] = await db<ImageSlice[]>`
    select content_type, size, substring(bytes from ${offset + 1}::int for ${length}::int) as data
    from coupon_images where project = ${project} and ref = ${ref}`;
  return row;
}
