-- Promotion configurations. At most one per project is active: the exclusion constraint (a partial
-- unique index that is checked at the end of each statement, not row by row) lets one statement
-- switch the active configuration (`set active = (id = $1) where project = $2 and (active or id =
-- $1)`), so no reader ever sees two or none, whatever order the statement updates its rows in.
-- `version` counts changes of the content; activation does not change it. The parts are stored as
-- json, as the client wrote them (member order kept).
create table promotion_configurations (
  project      text not null,
  id           integer not null check (id >= 0),
  active       boolean not null default false,
  version      integer not null default 1,
  rounding     json not null,
  ranks        json not null,
  groups       json not null,
  created_at   timestamptz not null default now(),
  updated_at   timestamptz not null default now(),
  activated_at timestamptz,
  primary key (project, id),
  constraint promotion_configurations_one_active exclude using btree (project with =) where (active) deferrable initially immediate
);

-- A checkout info is priced with the active configuration: every write (a new configuration, an
-- edit, an activation) gives the project a new catalog version at its commit, like the catalog
-- tables (0005), so checkout workers that remember catalog data per version notice it.
create trigger promotion_configurations_stamp_insert after insert on promotion_configurations
  referencing new table as touched_rows for each statement execute function note_catalog_stamp();
create trigger promotion_configurations_stamp_update after update on promotion_configurations
  referencing new table as touched_rows for each statement execute function note_catalog_stamp();
create trigger promotion_configurations_stamp_delete after delete on promotion_configurations
  referencing old table as touched_rows for each statement execute function note_catalog_stamp();
create trigger promotion_configurations_stamp_truncate after truncate on promotion_configurations
  for each statement execute function stamp_every_catalog_version();
