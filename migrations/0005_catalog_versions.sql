-- Catalog versions: the checkout workers keep what they read of a project's catalog in memory
-- (actors/checkout/catalog-cache.ts) and use it only while the project's version is the one it
-- was read at. Every write to a table a checkout info is priced from gives the project a new
-- version, in the writing transaction, through the triggers below: no writer can forget it, a
-- hand-written statement included.
--
-- Versions come from one sequence, so a project's version never takes a value it had before;
-- readers only compare them for equality.
create sequence catalog_version_seq;

create table catalog_versions (
  project text primary key,
  version bigint not null
);

-- A transaction's new version is given at its commit, not at its first catalog statement: the
-- version row stays locked from that update to the commit, and an import's chunks, written in
-- parallel transactions, would otherwise wait for each other's whole transactions. Statements note
-- the projects they touched here (one row per transaction and project, never contended); a trigger
-- deferred to the commit turns each note into the new version and removes it.
create unlogged table catalog_version_stamps (
  xid     xid8 not null,
  project text not null,
  primary key (xid, project)
);

create function note_catalog_stamp() returns trigger language plpgsql as $$
begin
  insert into catalog_version_stamps (xid, project)
  select pg_current_xact_id(), project from (select distinct project from touched_rows) touched
  on conflict do nothing;
  return null;
end $$;

create function stamp_catalog_version() returns trigger language plpgsql as $$
begin
  insert into catalog_versions (project, version) values (new.project, nextval('catalog_version_seq'))
  on conflict (project) do update set version = excluded.version;
  delete from catalog_version_stamps where xid = new.xid and project = new.project;
  return null;
end $$;

create constraint trigger catalog_version_stamps_at_commit after insert on catalog_version_stamps
  deferrable initially deferred for each row execute function stamp_catalog_version();

-- TRUNCATE names no rows: every project gets a new version.
create function stamp_every_catalog_version() returns trigger language plpgsql as $$
begin
  update catalog_versions set version = nextval('catalog_version_seq');
  return null;
end $$;

do $$
declare
  catalog_table text;
begin
  foreach catalog_table in array array[
    'products', 'product_codes', 'product_plus', 'category_prices', 'legacy_prices',
    'pricing_categories', 'pricing_category_shops', 'shops', 'project_settings'
  ] loop
    -- Statement-level: one note per project a statement touched, however many rows it wrote. The
    -- touched rows are the new ones on insert and update, the old ones on delete (no statement
    -- moves a row to another project).
    execute format('create trigger %I after insert on %I referencing new table as touched_rows
      for each statement execute function note_catalog_stamp()', catalog_table || '_stamp_insert', catalog_table);
    execute format('create trigger %I after update on %I referencing new table as touched_rows
      for each statement execute function note_catalog_stamp()', catalog_table || '_stamp_update', catalog_table);
    execute format('create trigger %I after delete on %I referencing old table as touched_rows
      for each statement execute function note_catalog_stamp()', catalog_table || '_stamp_delete', catalog_table);
    execute format('create trigger %I after truncate on %I
      for each statement execute function stamp_every_catalog_version()', catalog_table || '_stamp_truncate', catalog_table);
    -- Projects with data from before this migration get a version too, so that TRUNCATE reaches them.
    execute format('insert into catalog_versions (project, version)
      select project, nextval(''catalog_version_seq'') from (select distinct project from %I) p
      on conflict (project) do nothing', catalog_table);
  end loop;
end $$;
