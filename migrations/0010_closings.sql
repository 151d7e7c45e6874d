-- Closings: per-shop closing sequences, closing schedules and their claimed fire times, report
-- jobs, and the logs (files) generated for each closing.
--
-- A closing covers a contiguous range of its shop's order sequence numbers, right after the range
-- of the closing before it (closing_sequences keeps where the last one ended). The closing actor
-- locks the shop's closing_sequences row for the transaction that stores a closing, so two worker
-- processes never close one shop at once.

create table closing_schedules (
  id                 bigint generated always as identity primary key,
  project            text not null,
  shop_id            text collate "C" not null,
  days               text[] not null,
  hour               smallint not null check (hour between 0 and 24),
  minute             smallint not null check (minute between 0 and 59),
  location           text not null,
  mode               text not null,
  include_all_states boolean not null,
  formats            text[] not null,
  append_batch_every text,
  batch_formats      text[] not null,
  -- Fire times up to this instant are claimed or passed: a tick claims only a later one, and
  -- after a downtime only the latest that is due (one closing for everything missed).
  fired_until        timestamptz not null,
  created_at         timestamptz not null default now(),
  updated_at         timestamptz not null default now()
);
create index closing_schedules_by_project on closing_schedules (project, id);
create index closing_schedules_by_shop on closing_schedules (project, shop_id, id);

-- One row per (schedule, fire time) a tick claimed: the unique key makes any number of worker
-- processes claim a fire time once. Kept when its schedule is deleted (it is the audit trail of
-- the scheduled runs).
create table closing_triggers (
  schedule_id bigint not null,
  fire_at     timestamptz not null,
  project     text not null,
  shop_id     text collate "C" not null,
  claimed_at  timestamptz not null default now(),
  primary key (schedule_id, fire_at)
);

-- Where a shop's closings stand: the number of its last closing and the last order it covered.
create table closing_sequences (
  project                    text not null,
  shop_id                    text collate "C" not null,
  last_number                bigint not null default 0,
  last_order_sequence_number bigint not null default 0,
  primary key (project, shop_id)
);

create table closings (
  project                     text not null,
  shop_id                     text collate "C" not null,
  sequence_number             bigint not null,
  -- The covered range of the shop's order sequence numbers: (first - 1, last]; empty when first > last.
  first_order_sequence_number bigint not null,
  last_order_sequence_number  bigint not null,
  -- The orders it lists: the final ones of the range, or all of them with include_all_states.
  order_count                 integer not null,
  include_all_states          boolean not null,
  created_at                  timestamptz not null,
  cut_off_at                  timestamptz not null,
  -- The time zone its business day is counted in (its schedule's location, else UTC).
  zone                        text not null,
  currency                    text not null,
  shop                        jsonb not null,
  tax_shares                  jsonb not null,
  -- The rates of tax_shares as the orders write them ("19", "5.5"), in the same order.
  tax_rates                   text[] not null,
  share_by_payment_method     jsonb not null,
  total                       bigint not null,
  -- companyName, taxNumber, vatID, companyAdress as the project settings had them.
  company                     jsonb not null,
  -- What made it: a schedule's fire time or a report job.
  origin                      jsonb not null,
  -- '<scheduleId>:<fireTimeISO>' of the trigger that made it: a trigger delivered twice closes once.
  trigger_key                 text unique,
  job_id                      uuid unique,
  primary key (project, shop_id, sequence_number)
);
create index closings_newest on closings (project, created_at desc, shop_id, sequence_number desc);
create index closings_newest_of_shop on closings (project, shop_id, created_at desc, sequence_number desc);

-- One log per format of a closing: not_present until the closing actor wrote it.
create table closing_logs (
  id                      bigint generated always as identity primary key,
  project                 text not null,
  shop_id                 text collate "C" not null,
  closing_sequence_number bigint not null,
  format                  text not null,
  state                   text not null default 'not_present' check (state in ('not_present', 'present')),
  -- The writing run whose chunks are the file (a run that was overtaken never becomes it).
  generation              uuid,
  content_type            text,
  file_name               text,
  size                    bigint,
  written_at              timestamptz,
  unique (project, shop_id, closing_sequence_number, format),
  foreign key (project, shop_id, closing_sequence_number) references closings (project, shop_id, sequence_number)
);

-- The bytes of the logs, in chunks, written as they stream out of the writer. Part 0 is the file;
-- other parts hold the compressed streams of a zip's members until the zip is assembled.
create table closing_log_chunks (
  log_id     bigint not null references closing_logs (id) on delete cascade,
  generation uuid not null,
  part       integer not null,
  n          integer not null,
  data       bytea not null,
  primary key (log_id, generation, part, n)
);
-- Zip and deflate output does not compress again: store it as it is.
alter table closing_log_chunks alter column data set storage external;

-- Report jobs: "close this shop now", answered 202 and followed until done or failed.
create table closing_jobs (
  id                      uuid primary key,
  project                 text not null,
  shop_id                 text collate "C" not null,
  device_id               text not null,
  skipped_cash_count      boolean not null,
  formats                 text[] not null,
  state                   text not null default 'pending' check (state in ('pending', 'done', 'failed')),
  closing_sequence_number bigint,
  reason                  text,
  created_at              timestamptz not null default now(),
  finished_at             timestamptz
);
create index closing_jobs_by_project on closing_jobs (project, created_at desc);
