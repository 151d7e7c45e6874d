-- Coupon redemptions, recorded with the checkout process that redeemed them when it succeeds. The
-- key makes a redemption unique as the coupon's redeemType says: `code:<scanned code>`
-- (once-per-scanned-code), `user:<appUserID>` (once-per-app-user-id), or `process:<id>` (multiple:
-- every process may). Two processes racing to redeem a once-only coupon: the unique key lets one
-- record it; the other one finds it taken and shows its coupon line as not redeemed.
create table coupon_redemptions (
  project        text not null,
  coupon_id      text collate "C" not null,
  redemption_key text not null,
  process_id     text collate "C" not null,
  redeemed_at    timestamptz not null default now(),
  primary key (project, coupon_id, redemption_key)
);
create index coupon_redemptions_by_process on coupon_redemptions (project, process_id);
