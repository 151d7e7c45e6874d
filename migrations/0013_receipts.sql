-- Receipts: the PDF of a final order, made on the first request and kept. A final order never
-- changes, so neither does its receipt; the ETag is a hash of the bytes.
-- The PDF is kept as base64 text, the form it travels in to the edge: a request reads and sends
-- it on without decoding and encoding it again. It is compressed already, so it is stored out of
-- line uncompressed, and a part of it is read without decompressing the whole.
create table receipts (
  project    text not null,
  order_id   text collate "C" not null,
  etag       text not null,
  size       integer not null,
  pdf_base64 text not null,
  created_at timestamptz not null default now(),
  primary key (project, order_id),
  foreign key (project, order_id) references orders (project, id) on delete cascade
);
alter table receipts alter column pdf_base64 set storage external;

-- An app user's purchase history: their final orders, newest first.
create index orders_by_app_user on orders (project, (doc->>'appUserID'), finalized_at desc, id desc)
  where state = 'final';
