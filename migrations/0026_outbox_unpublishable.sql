-- Outbox rows the relay cannot publish: one message over the NATS server's limit (max_payload,
-- 1 MB by default). The relay moves such a row here in the transaction that takes it, and says so
-- at error level, instead of trying it again forever while every event written after it waits
-- (actors/outbox/relay.ts). docs/operations.md says what to do with one.
create table outbox_unpublishable (
  seq        bigint primary key,
  id         text not null,
  subject    text not null,
  payload    json not null,
  created_at timestamptz not null,
  bytes      integer not null,
  moved_at   timestamptz not null default now()
);
