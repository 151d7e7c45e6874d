-- Integrations (subjects/integrations.ts, docs/integrators.md): how outside systems follow a
-- project's events. Kind `nats`: a durable consumer on EVENTS (`consumer`, filtered to
-- events.<project>.<filter>) and a NATS user that may read only it (`inbox_prefix` is its inbox).
-- Kind `webhook`: a URL that receives the event types in `events` (null: all), signed with
-- `secret`; after a rotation `previous_secret` signs too until `previous_secret_until`. Secrets are
-- sealed with SECRETS_KEY (src/secrets/key-ring.ts), never stored plain.
create table integrations (
  project               text not null,
  id                    text not null,
  name                  text not null,
  kind                  text not null check (kind in ('nats', 'webhook')),
  filter                text,
  consumer              text,
  inbox_prefix          text,
  url                   text,
  events                text[],
  secret                text,
  previous_secret       text,
  previous_secret_until timestamptz,
  state                 text not null default 'active' check (state in ('active', 'disabled')),
  disabled_reason       text,
  created_at            timestamptz not null default now(),
  updated_at            timestamptz not null default now(),
  primary key (project, id)
);

-- The NATS users issued to integrations, by public key (their seeds are never stored: a
-- credential is shown once). A revoked one stays, with the time of its revocation: the platform
-- account's JWT lists every revoked key.
create table nats_credentials (
  user_key       text primary key,
  project        text not null,
  integration_id text not null,
  issued_at      timestamptz not null default now(),
  revoked_at     timestamptz
);
create index nats_credentials_integration on nats_credentials (project, integration_id) where revoked_at is null;

-- The platform account's JWT as the workers last issued it (with every revocation), and when
-- (seconds): each update is issued later than the one before, since a server takes an account JWT
-- only if it is no older than the one it holds.
create table nats_account_jwts (
  account   text primary key,
  issued_at bigint not null,
  jwt       text not null
);
