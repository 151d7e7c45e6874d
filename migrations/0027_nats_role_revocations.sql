-- The keys of the platform's own NATS users (edge, workers, service, admin) that an operator
-- renewed (npm run nats-auth -- --renew <role>): revoked, so the platform account's JWT lists them
-- beside the integrations' revoked keys (nats_credentials) every time it is issued again.
create table nats_role_revocations (
  user_key   text primary key,
  role       text not null,
  revoked_at timestamptz not null default now()
);
