-- Project settings: one row per project once it has been written; defaults apply until then.
create table project_settings (
  project         text primary key,
  currency        text not null,
  tax_rates       jsonb not null,
  payment_methods text[] not null,
  updated_at      timestamptz not null default now()
);

create table shops (
  project       text not null,
  id            text not null,
  external_id   text,
  name          text not null,
  email         text not null default '',
  phone         text not null default '',
  street        text not null default '',
  zip           text not null default '',
  city          text not null default '',
  state         text not null default '',
  country       text not null default '',
  lat           double precision,
  lon           double precision,
  opening_hours jsonb not null default '[]',
  services      text[] not null default '{}',
  external      jsonb not null default '{}',
  created_at    timestamptz not null default now(),
  updated_at    timestamptz not null default now(),
  primary key (project, id)
);

-- Search by external id answers one shop, so an external id names one shop of a project.
create unique index shops_project_external_id_key on shops (project, external_id) where external_id is not null;
