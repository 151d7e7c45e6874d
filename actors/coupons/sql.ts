import type { Sql, TransactionSql } from '../../src/infra/postgres.js';
import type { StoredCoupon } from '../../subjects/coupons.js';

type Db = Sql | TransactionSql;

export interface CouponRow {
  project: string;
  id: string;
  seq: string;
  doc: StoredCoupon;
  version: number;
  etag: string;
  created_at: Date;
  updated_at: Date;
}

/** A coupon row with the project's locale (null: the default settings), the language of its texts. */
export type ReadCouponRow = CouponRow & { locale: string | null };

/** `*`, or the ETags one of which must be the coupon's. */
export type IfMatch = '*' | readonly string[];

// The stored coupon goes as text: the driver would encode a value for a json column a second time.
const json = (doc: StoredCoupon) => JSON.stringify(doc);
const matches = (db: Db, ifMatch: IfMatch) => (ifMatch === '*' ? db`true` : db`etag = any(${[...ifMatch]}::text[])`);

export async function listCoupons(db: Db, project: string, afterSeq: string | undefined, limit: number): Promise<ReadCouponRow[]> {
  return db<ReadCouponRow[]>`
    select c.*, s.locale from coupons c left join project_settings s on s.project = c.project
    where c.project = ${project} and c.seq > ${afterSeq ?? '0'}::bigint
    order by c.seq limit ${limit}`;
}

export async function findCoupon(db: Db, project: string, id: string): Promise<ReadCouponRow | undefined> {
  const [row] = await db<ReadCouponRow[]>`
    select c.*, s.locale from coupons c left join project_settings s on s.project = c.project
    where c.project = ${project} and c.id = ${id}`;
  return row;
}

export async function couponExists(db: Db, project: string, id: string): Promise<boolean> {
  const [row] = await db<{ found: boolean }[]>`select exists (select from coupons where project = ${project} and id = ${id}) as found`;
  return row!.found;
}

/** Inserts a new coupon; undefined when the id is taken. */
export async function insertCoupon(db: Db, project: string, id: string, doc: StoredCoupon): Promise<ReadCouponRow | undefined> {
  const [row] = await db<ReadCouponRow[]>`
    with created as (
      insert into coupons (project, id, doc, etag, created_at)
      values (${project}, ${id}, ${json(doc)}::text::json, coupon_etag(1, now(), ${json(doc)}::text::json), now())
      on conflict (project, id) do nothing
      returning *
    )
    select c.*, s.locale from created c left join project_settings s on s.project = c.project`;
  return row;
}

/**
 * Replaces a coupon if its ETag is one of `ifMatch` (any, for `*`): the check and the write are this
 * one statement, so of writers holding the same ETag exactly one succeeds (the others wait for its
 * row lock, then find a new ETag). Undefined when nothing was written (missing, or another ETag).
 */
export async function updateCoupon(db: Db, project: string, id: string, doc: StoredCoupon, ifMatch: IfMatch): Promise<ReadCouponRow | undefined> {
  const [row] = await db<ReadCouponRow[]>`
    with updated as (
      update coupons set
        doc = ${json(doc)}::text::json,
        version = version + 1,
        etag = coupon_etag(version + 1, created_at, ${json(doc)}::text::json),
        updated_at = now()
      where project = ${project} and id = ${id} and ${matches(db, ifMatch)}
      returning *
    )
    select u.*, s.locale from updated u left join project_settings s on s.project = u.project`;
  return row;
}

/** Deletes a coupon (its codes with it) if its ETag is one of `ifMatch`; its last version, or undefined. */
export async function deleteCoupon(db: Db, project: string, id: string, ifMatch: IfMatch): Promise<number | undefined> {
  const [row] = await db<{ version: number }[]>`
    delete from coupons where project = ${project} and id = ${id} and ${matches(db, ifMatch)} returning version`;
  return row?.version;
}

/**
 * Makes `codes` the coupon's scannable codes. Answers the codes another coupon of the project
 * holds, with their owner; the caller then rolls back (a code names at most one coupon).
 */
export async function replaceCouponCodes(tx: TransactionSql, project: string, id: string, codes: readonly string[]): Promise<Array<{ code: string; coupon_id: string }>> {
  await tx`delete from coupon_codes where project = ${project} and coupon_id = ${id}`;
  if (!codes.length) return [];
  const claimed = await tx<{ code: string }[]>`
    insert into coupon_codes (project, code, coupon_id)
    select ${project}, code, ${id} from unnest(${[...codes]}::text[]) as c(code) order by code
    on conflict (project, code) do nothing
    returning code`;
  if (claimed.length === codes.length) return [];
  const mine = new Set(claimed.map((c) => c.code));
  const taken = codes.filter((code) => !mine.has(code));
  return tx<Array<{ code: string; coupon_id: string }>>`
    select code, coupon_id from coupon_codes where project = ${project} and code = any(${taken}::text[]) order by code`;
}

export interface ImageMeta {
  ref: string;
  content_type: string;
  width: number;
  height: number;
}

/** What the project's uploaded images with these refs are; refs without an image are missing. */
export async function findImages(db: Db, project: string, refs: readonly string[]): Promise<ImageMeta[]> {
  if (!refs.length) return [];
  return db<ImageMeta[]>`
    select ref, content_type, width, height from coupon_images where project = ${project} and ref = any(${[...refs]}::text[])`;
}

/** A coupon a checkout names: by id (a coupon cart item), or by a scanned code that is one of its codes. */
export interface CheckoutCouponRow {
  id: string;
  doc: StoredCoupon;
  /** Whether one of the given ids is this coupon's (else it was found by a code only). */
  by_id: boolean;
  /** The given scanned codes that are this coupon's codes. */
  scanned_codes: string[];
  /** The given redemption keys under which this coupon is redeemed already. */
  redeemed_keys: string[];
}

/**
 * For the checkout: the project's coupons among `ids`, and the coupons whose codes are among
 * `scannedCodes`, in one statement, each once, saying how it was named and under which of
 * `redemptionKeys` it is redeemed already.
 */
export async function findCheckoutCoupons(
  db: Db,
  project: string,
  ids: readonly string[],
  scannedCodes: readonly string[],
  redemptionKeys: readonly string[] = [],
): Promise<CheckoutCouponRow[]> {
  if (!ids.length && !scannedCodes.length) return [];
  return db<CheckoutCouponRow[]>`
    with named as (
      select id, true as by_id, null::text as code from unnest(${[...ids]}::text[]) as i(id)
      union all
      select cc.coupon_id, false, cc.code from coupon_codes cc
      where cc.project = ${project} and cc.code = any(${[...scannedCodes]}::text[])
    )
    select c.id, c.doc, bool_or(n.by_id) as by_id,
           coalesce(array_agg(distinct n.code) filter (where n.code is not null), '{}') as scanned_codes,
           array(select r.redemption_key from coupon_redemptions r
                 where r.project = c.project and r.coupon_id = c.id and r.redemption_key = any(${[...redemptionKeys]}::text[])) as redeemed_keys
    from named n join coupons c on c.project = ${project} and c.id = n.id
    group by c.project, c.id
    order by c.id`;
}

/** The redeemType of each of these coupons (a deleted coupon is left out). */
export async function findRedeemTypes(db: Db, project: string, ids: readonly string[]): Promise<Map<string, StoredCoupon['redeemType']>> {
  const rows = await db<{ id: string; redeem_type: StoredCoupon['redeemType'] }[]>`
    select id, doc ->> 'redeemType' as redeem_type from coupons where project = ${project} and id = any(${[...ids]}::text[])`;
  return new Map(rows.map((r) => [r.id, r.redeem_type]));
}

/**
 * Records the redemptions of a process that succeeds (in its transaction): the ones whose key is
 * taken by an earlier process are not recorded. Answers the coupon ids recorded.
 */
export async function recordRedemptions(db: Db, project: string, processId: string, redemptions: ReadonlyArray<{ couponID: string; key: string }>): Promise<string[]> {
  if (!redemptions.length) return [];
  const rows = await db<{ coupon_id: string }[]>`
    insert into coupon_redemptions (project, coupon_id, redemption_key, process_id)
    select ${project}, r.coupon_id, r.key, ${processId}
    from unnest(${redemptions.map((r) => r.couponID)}::text[], ${redemptions.map((r) => r.key)}::text[]) as r(coupon_id, key)
    on conflict (project, coupon_id, redemption_key) do nothing
    returning coupon_id`;
  return rows.map((r) => r.coupon_id);
}
