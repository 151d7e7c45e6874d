-- Webhook deliveries (actors/webhooks, docs/integrators.md "Webhooks").
--
-- The relay writes a delivery job per (event, webhook integration that asks for it) when it
-- publishes the event; the job's worker keeps here what it did:
-- - webhook_messages: one row per (integration, event): the event as sent (so that it can be sent
--   again by hand), when the outbox wrote it, how many attempts were made, when the next may be,
--   and when it was delivered (a 2xx) or given up.
-- - webhook_attempts: one row per attempt (time, status: the HTTP status, `timeout` or
--   `connection_failed`, duration, the first 500 bytes of the answer), newest first per integration.
-- - integrations.failed_attempts / failing_since / retry_at: the integration's consecutive failed
--   attempts, since when, and when it may be tried again: while a receiver is down, its other events
--   wait instead of each trying; after WEBHOOK_MAX_ATTEMPTS in a row it is disabled.
alter table integrations
  add column failed_attempts int not null default 0,
  add column failing_since timestamptz,
  add column retry_at timestamptz;

create table webhook_messages (
  project        text not null,
  integration_id text not null,
  event_id       text not null,
  event_type     text not null,
  subject        text not null,
  payload        json not null,
  written_at     timestamptz not null,
  attempts       int not null default 0,
  next_attempt_at timestamptz,
  delivered_at   timestamptz,
  failed_at      timestamptz,
  created_at     timestamptz not null default now(),
  primary key (project, integration_id, event_id)
);
-- What waits (the oldest undelivered event's age, in /metrics).
create index webhook_messages_waiting on webhook_messages (written_at) where delivered_at is null and failed_at is null;

create table webhook_attempts (
  project        text not null,
  integration_id text not null,
  id             bigint generated always as identity,
  event_id       text not null,
  event_type     text not null,
  attempt        int not null,
  at             timestamptz not null default now(),
  status         text not null,
  duration_ms    int not null,
  response       text not null default '',
  primary key (project, integration_id, id)
);
create index webhook_attempts_newest on webhook_attempts (project, integration_id, at desc, id desc);

-- The relay looks up, for each event it publishes, the active webhooks of its project.
create index integrations_active_webhooks on integrations (project) where kind = 'webhook' and state = 'active';
