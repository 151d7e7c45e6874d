-- Healing (src/infra/healing.ts, docs/operations.md "Healing"): when the stream JOBS was lost and
-- made again, each kind's jobs whose work Postgres says is not done are sent again, once per kind
-- and life of the stream (its creation time): the process whose insert takes the row sends them, in
-- the same transaction; the others find it taken. Kept a month.
create table job_resends (
  kind text not null,
  life text not null,
  jobs int not null,
  at   timestamptz not null default now(),
  primary key (kind, life)
);

-- Webhook deliveries are recorded when the relay publishes their job (attempts 0), not only at their
-- first attempt: Postgres then knows every delivery not yet made, to send again when JOBS is lost.
-- queued_at: when its job was last sent; null: parked (its receiver failed, it waits for its next
-- try in Postgres rather than in JetStream, where it would hold a place every project shares), sent
-- again by the webhook pool once due (actors/webhooks/requeue.ts).
alter table webhook_messages add column queued_at timestamptz;
update webhook_messages set queued_at = now() where delivered_at is null and failed_at is null;
create index webhook_messages_undone on webhook_messages (next_attempt_at) where delivered_at is null and failed_at is null;
