-- Webhook deliveries in fewer rows (actors/webhooks/sql.ts).
--
-- An event's latest attempt is kept on its webhook_messages row (time, status: the HTTP status,
-- `timeout` or `connection_failed`, duration, the first 500 bytes of the answer); webhook_attempts
-- keeps only the attempts before it (moved there when a new one is made). An event delivered at its
-- first attempt is one row instead of two. The deliveries list is both, newest first.
--
-- The event's JSON is kept as text: it is only ever sent again by hand, as written.
alter table webhook_messages
  alter column payload type text using payload::text,
  drop column created_at,
  add column last_attempt_at timestamptz,
  add column last_status text,
  add column last_duration_ms int,
  add column last_response text;

-- Rows written before: each event's latest attempt moves onto its row.
-- (Ids are one sequence's: each event's latest is its highest, found in one pass over the table.)
with latest as (
  delete from webhook_attempts
  where id in (select distinct on (project, integration_id, event_id) id from webhook_attempts
               order by project, integration_id, event_id, id desc)
  returning *
)
update webhook_messages m
set last_attempt_at = l.at, last_status = l.status, last_duration_ms = l.duration_ms, last_response = l.response
from latest l
where l.project = m.project and l.integration_id = m.integration_id and l.event_id = m.event_id;

-- An event whose attempt was never written (not made by this version): shown as made when it was written.
update webhook_messages
set last_attempt_at = written_at, last_status = 'connection_failed', last_duration_ms = 0, last_response = ''
where last_attempt_at is null;

alter table webhook_messages
  alter column last_attempt_at set not null,
  alter column last_status set not null,
  alter column last_duration_ms set not null,
  alter column last_response set not null;

-- The deliveries list, newest first. Keyed by the integration alone (its id is unique): an index that
-- also began with the project would match a lookup by the primary key's first two columns as well,
-- and a planner with old statistics took it for that (a scan of the integration's every event).
drop index webhook_messages_waiting;
create index webhook_messages_newest on webhook_messages (integration_id, last_attempt_at desc);
drop index webhook_attempts_newest;
create index webhook_attempts_newest on webhook_attempts (integration_id, at desc, id desc);
