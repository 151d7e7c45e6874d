-- Coupons: one row per coupon, its scannable codes (a code names at most one coupon of a project),
-- and the images coupons show, stored by the SHA-256 of their bytes.

-- The strong ETag of a coupon's state: its version and a digest of the stored document and of its
-- creation time, so a coupon deleted and created again under the same id never repeats an ETag.
create function coupon_etag(version integer, created timestamptz, doc json) returns text
language sql stable strict parallel safe as $$
  select '"' || version || '-' || left(encode(sha256(convert_to(extract(epoch from created)::text || ' ' || doc::text, 'UTF8')), 'hex'), 24) || '"'
$$;

create table coupons (
  project    text not null,
  id         text not null,
  -- List order and its page cursor: the order of creation.
  seq        bigint generated always as identity,
  -- The stored coupon as the API takes it (json keeps the order of its translations).
  doc        json not null,
  version    integer not null default 1,
  etag       text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (project, id)
);

create unique index coupons_project_seq_key on coupons (project, seq);

create table coupon_codes (
  project   text not null,
  code      text not null,
  coupon_id text not null,
  primary key (project, code),
  foreign key (project, coupon_id) references coupons (project, id) on delete cascade
);

create index coupon_codes_coupon on coupon_codes (project, coupon_id);

create table coupon_images (
  project      text not null,
  ref          text not null,
  content_type text not null,
  width        integer not null,
  height       integer not null,
  size         integer not null,
  bytes        bytea not null,
  created_at   timestamptz not null default now(),
  primary key (project, ref)
);

-- Images are compressed already; stored uncompressed out of line, a part of one is read without
-- reading the whole (GET answers large images in parts).
alter table coupon_images alter column bytes set storage external;

-- Parts of an upload larger than one message, written by whichever worker got them, until the
-- upload's last part assembles them.
create table coupon_image_parts (
  upload     uuid not null,
  index      integer not null,
  project    text not null,
  bytes      bytea not null,
  created_at timestamptz not null default now(),
  primary key (upload, index)
);

create index coupon_image_parts_created on coupon_image_parts (created_at);
