-- Integrations of kind nats get a NATS account of their own (src/infra/nats-auth/accounts.ts):
-- a user inside the platform's account could have the servers answer into it (a reply subject is
-- never checked against permissions), so the users issued there before are revoked, and each such
-- integration is given an account at its next rotation. `nats_account` is the account's public
-- key (null: none yet), `user_issued_at` when its current user was issued (seconds); a rotation
-- revokes every user of the account issued up to then. `rotations_*` count the rotations of the
-- current window (both kinds), which are limited.
alter table integrations
  add column nats_account           text,
  add column user_issued_at         bigint,
  add column rotations_window_start timestamptz,
  add column rotations_in_window    integer not null default 0;

-- The account a credential was issued in (null: the platform's, before integrations had accounts).
alter table nats_credentials add column account text;
update nats_credentials set revoked_at = now() where revoked_at is null;

-- The account a renewed role key was revoked in (null: the platform's; the edge's user lives in an
-- account of its own since this version).
alter table nats_role_revocations add column account text;
