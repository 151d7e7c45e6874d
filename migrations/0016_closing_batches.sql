-- Batch logs: between two closings of a shop, every appendBatchEvery of a schedule, the orders
-- that came since the last batch are appended to the coming (open) closing's batch logs, one per
-- batchFormats entry. A batch time is claimed once, like a closing's fire time (closing_batches,
-- unique on schedule and batch time), and the append runs in the shop's closing actor.

-- Batch times up to this instant are claimed or passed: a tick claims only a later one (and after
-- a downtime only the latest that is due: one batch takes everything missed).
alter table closing_schedules add column batched_until timestamptz not null default now();

-- The last order a batch of the open closing appended: the next batch starts after it, and the
-- next closing covers at least up to it (a batch log is always a prefix of its closing's orders).
alter table closing_sequences add column batched_order_sequence_number bigint not null default 0;

-- A batch log belongs to the closing it is the running log of, which does not exist until the day
-- is closed: the reference to closings goes (closing logs are still inserted with their closing,
-- in its transaction). A closing may have a log and a batch log of one format.
alter table closing_logs add column kind text not null default 'closing' check (kind in ('closing', 'batch'));
alter table closing_logs drop constraint closing_logs_project_shop_id_closing_sequence_number_fkey;
alter table closing_logs drop constraint closing_logs_project_shop_id_closing_sequence_number_format_key;
alter table closing_logs add constraint closing_logs_one_per_format unique (project, shop_id, closing_sequence_number, kind, format);

-- One row per (schedule, batch time) a tick claimed; the closing actor fills in what it appended.
create table closing_batches (
  schedule_id                 bigint not null,
  batch_at                    timestamptz not null,
  project                     text not null,
  shop_id                     text collate "C" not null,
  claimed_at                  timestamptz not null default now(),
  -- Set when appended: the open closing it went to and the range of order sequence numbers it
  -- took, (first - 1, last]; empty (first > last) when nothing had come.
  closing_sequence_number     bigint,
  first_order_sequence_number bigint,
  last_order_sequence_number  bigint,
  order_count                 integer,
  appended_at                 timestamptz,
  primary key (schedule_id, batch_at)
);
create index closing_batches_of_closing on closing_batches (project, shop_id, closing_sequence_number, batch_at);
