-- Fiscalization (KassenSichV): every sale is signed by a TSE (README "Fiscalization").

-- The project's choice of TSE provider and its credentials (key, secret and admin PIN are
-- write-only: the settings actor never answers them). Null: the project chose nothing.
alter table project_settings add column fiscalization jsonb;

-- The provider a process was created under (null: `none`, or a process from before this
-- migration): its finish is signed by the same one, whatever the settings say by then.
alter table checkout_processes add column fiscal_provider text;

-- An order whose TSE finish is not recorded yet: its receipt waits for it.
alter table orders add column fiscal_pending boolean not null default false;

-- One TSE transaction per checkout process: what the provider answered for its start (revision 1)
-- and its finish (revision 2). A job whose revision is recorded here does nothing.
create table fiscal_transactions (
  project            text not null,
  process_id         text collate "C" not null,
  shop_id            text collate "C" not null,
  provider           text not null,
  device             jsonb,
  client_serial      text,
  transaction_number bigint,
  start_log          jsonb,
  finish_log         jsonb,
  started_at         timestamptz,
  finished_at        timestamptz,
  primary key (project, process_id)
);

-- The local software signer (not a certified TSE): one key pair and one pair of counters per
-- project. The signing transaction locks the row, so counters never repeat or skip.
create table fiscal_local_tss (
  project            text primary key,
  private_key        text not null,
  public_key         text not null,
  serial_number      text not null,
  certificate        text not null,
  signature_counter  bigint not null default 0,
  transaction_number bigint not null default 0,
  created_at         timestamptz not null default now()
);

-- What the local signer signed: one log per (transaction, revision), so a repeated call answers
-- the stored one instead of signing again.
create table fiscal_local_logs (
  project            text not null,
  transaction_id     text collate "C" not null,
  revision           smallint not null,
  transaction_number bigint not null,
  counter            bigint not null,
  unix_time          bigint not null,
  process_type       text not null,
  process_data       text not null,
  signature          text not null,
  primary key (project, transaction_id, revision),
  unique (project, counter)
);
