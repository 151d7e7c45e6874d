-- Clients (subjects/clients.ts, docs/api.md "Clients"): who may get a token without an identity
-- provider. Kind `app`: a customer app (the app SDKs' sign-in); `secret` is its TOTP key, which
-- the platform must read back to check codes, so it is sealed with SECRETS_KEY
-- (src/secrets/key-ring.ts). Kind `service`: a back-office server (OAuth 2.0 client credentials);
-- `secret` is the SHA-256 of its secret, which the platform only checks. The id names an app in
-- public paths and a service in Basic credentials without its project, so it is unique across
-- projects. After a rotation `previous_secret` is still accepted until `previous_secret_until`.
create table clients (
  id                     text primary key,
  project                text not null,
  name                   text not null,
  kind                   text not null check (kind in ('app', 'service')),
  permissions            text[] not null default '{}',
  token_lifetime_seconds int not null check (token_lifetime_seconds between 60 and 86400),
  secret                 text not null,
  previous_secret        text,
  previous_secret_until  timestamptz,
  created_at             timestamptz not null default now(),
  rotated_at             timestamptz
);
create index clients_project on clients (project, created_at);

-- The app users an app's installations made for themselves (POST /apps/{appID}/users): the secret
-- only as its SHA-256 (a random 256-bit value: no dictionary to try, so no salt or stretching is
-- needed, and a token request stays cheap). They end with their client.
create table app_users (
  id              uuid primary key,
  client_id       text not null references clients (id) on delete cascade,
  project         text not null,
  secret_hash     bytea not null,
  consent_version text,
  consented_at    timestamptz,
  created_at      timestamptz not null default now()
);
create index app_users_client on app_users (client_id);
