-- Receipts: the PDF of a final order, made on the first request and kept. A final order never
-- changes, so neither does its receipt; the ETag is a hash of the bytes.
create table receipts (
  project    text not null,
  order_id   text collate "C" not null,
  etag       text not null,
  pdf        bytea not null,
  created_at timestamptz not null default now(),
  primary key (project, order_id),
  foreign key (project, order_id) references orders (project, id) on delete cascade
);
-- The PDF is compressed already: stored out of line uncompressed, so a part is read without
-- decompressing the whole.
alter table receipts alter column pdf set storage external;

-- An app user's purchase history: their final orders, newest first.
create index orders_by_app_user on orders (project, (doc->>'appUserID'), finalized_at desc, id desc)
  where state = 'final';
