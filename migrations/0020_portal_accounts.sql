-- Portal accounts (subjects/portal-accounts.ts): the retailer's people who sign in to /portal.
-- Per project, an email once (compared lower-cased); the password only as a scrypt hash
-- (`scrypt$N$r$p$salt$hash`). `password_change_required`: the password is a one-time password
-- (made by `npm run portal-user` or an owner) that only lets its holder choose a new one.
-- Five failed sign-ins in a row set `locked_until` (15 minutes); a good sign-in resets the count.
create table portal_accounts (
  project                  text not null,
  id                       uuid not null default gen_random_uuid(),
  email                    text not null,
  role                     text not null,
  password_hash            text not null,
  password_change_required boolean not null default true,
  failed_sign_ins          int not null default 0,
  locked_until             timestamptz,
  created_at               timestamptz not null default now(),
  primary key (project, id)
);
create unique index portal_accounts_email on portal_accounts (project, lower(email));

-- A session is known by the SHA-256 of its cookie value (the value itself is never stored), so a
-- copy of the table signs nobody in. Deleting the account ends its sessions.
create table portal_sessions (
  token_hash  bytea primary key,
  project     text not null,
  account_id  uuid not null,
  created_at  timestamptz not null default now(),
  expires_at  timestamptz not null,
  foreign key (project, account_id) references portal_accounts (project, id) on delete cascade
);
create index portal_sessions_account on portal_sessions (project, account_id);
create index portal_sessions_expiry on portal_sessions (expires_at);

-- The portal's Orders and Today screens list a project's final orders of a date range and count them
-- (GET /{project}/orders): with `state` beside the keys, the count reads the index alone instead of
-- fetching every matching order's row to check its state.
create index orders_final_by_time on orders (project, finalized_at, id) where state = 'final';
