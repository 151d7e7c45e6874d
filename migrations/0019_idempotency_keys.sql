-- Idempotency keys of the POST routes that create (src/edge/idempotency.ts, actors/idempotency):
-- a project's key names the first answer, replayed for 24 hours to a request with the same
-- fingerprint (method, route, path and body). The client's key itself is not stored: `key_hash` is
-- its SHA-256, and `answer` (headers and body) is sealed with a key derived from it, so the table
-- tells nothing to a reader who does not hold the key (a created PoS credential's one-time password
-- is in its answer).
create table idempotency_keys (
  project      text not null,
  key_hash     text collate "C" not null,
  fingerprint  text collate "C" not null,
  -- The request that runs now; its completion or release names it, so a late one changes nothing.
  claim        uuid not null,
  -- While the first request runs (status null): after this, a request with the same fingerprint
  -- takes the key over (its edge died before it answered).
  locked_until timestamptz,
  status       smallint,
  answer       bytea,
  created_at   timestamptz not null default now(),
  primary key (project, key_hash)
);
-- Keys expire 24 hours after their first request; the workers delete them in batches by age.
create index idempotency_keys_by_age on idempotency_keys (created_at);
