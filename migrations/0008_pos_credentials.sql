-- PoS credentials: Basic authentication for virtual points of sale (subjects/pos-credentials.ts).
-- The password is kept only as a scrypt hash (`scrypt$N$r$p$salt$hash`, base64url parts).
create table pos_credentials (
  project       text not null,
  username      text collate "C" not null,
  name          text not null,
  permissions   text[] not null,
  password_hash text not null,
  created_at    timestamptz not null default now(),
  primary key (project, username)
);
