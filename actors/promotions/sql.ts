import type { Sql, TransactionSql } from '../../src/infra/postgres.js';
import { DefaultSettings } from '../../subjects/settings.js';
import type { ConfigurationBody, Group, Rank, Rounding } from '../../subjects/promotions.js';

type Db = Sql | TransactionSql;

export interface ConfigurationRow {
  project: string;
  id: number;
  active: boolean;
  version: number;
  rounding: Rounding;
  ranks: Rank[];
  groups: Group[];
  created_at: Date;
  updated_at: Date;
  activated_at: Date | null;
}

// The parts go as text: the driver would encode a value for a json column a second time.
const json = (value: unknown) => JSON.stringify(value);

/** Writers of a project's configurations take turns (creation picks the next free id; activations switch). */
const PromotionsLock = 7_420_012;

export async function lockProjectConfigurations(tx: TransactionSql, project: string): Promise<void> {
  await tx`select pg_advisory_xact_lock(${PromotionsLock}, hashtext(${project}))`;
}

/** The project's currency (money arguments are read in it). */
export async function projectCurrency(db: Db, project: string): Promise<string> {
  const [row] = await db<{ currency: string }[]>`select currency from project_settings where project = ${project}`;
  return row?.currency ?? DefaultSettings.currency;
}

/** Configurations in id order after `after`, at most `limit`. */
export function listConfigurations(db: Db, project: string, after: number | undefined, limit: number): Promise<ConfigurationRow[]> {
  return db<ConfigurationRow[]>`
    select * from promotion_configurations where project = ${project} and id > ${after ?? -1}
    order by id limit ${limit}`;
}

export async function findConfiguration(db: Db, project: string, id: number): Promise<ConfigurationRow | undefined> {
  const [row] = await db<ConfigurationRow[]>`select * from promotion_configurations where project = ${project} and id = ${id}`;
  return row;
}

/** The active configuration of a project, if one is; `version` tells a reader whether its compiled copy is current. */
export async function findActiveConfiguration(db: Db, project: string): Promise<ConfigurationRow | undefined> {
  const [row] = await db<ConfigurationRow[]>`select * from promotion_configurations where project = ${project} and active`;
  return row;
}

/** Inserts a configuration with the given id or the next free one; undefined when the given id is taken. */
export async function insertConfiguration(db: Db, project: string, id: number | undefined, body: ConfigurationBody): Promise<ConfigurationRow | undefined> {
  const [row] = await db<ConfigurationRow[]>`
    insert into promotion_configurations (project, id, rounding, ranks, groups)
    values (
      ${project},
      coalesce(${id ?? null}::integer, (select coalesce(max(id) + 1, 1) from promotion_configurations where project = ${project})),
      ${json(body.rounding)}::text::json, ${json(body.ranks)}::text::json, ${json(body.groups)}::text::json
    )
    on conflict (project, id) do nothing
    returning *`;
  return row;
}

/** Replaces a configuration's content (its active state stays); undefined when there is none. */
export async function updateConfiguration(db: Db, project: string, id: number, body: ConfigurationBody): Promise<ConfigurationRow | undefined> {
  const [row] = await db<ConfigurationRow[]>`
    update promotion_configurations
    set rounding = ${json(body.rounding)}::text::json, ranks = ${json(body.ranks)}::text::json, groups = ${json(body.groups)}::text::json,
        version = version + 1, updated_at = now()
    where project = ${project} and id = ${id}
    returning *`;
  return row;
}

/**
 * Makes `id` the project's active configuration in one statement: it and the configuration active
 * until now change together, so a reader sees one or the other, never two or none. Answers the rows
 * it changed (none when `id` is active already or does not exist).
 */
export function switchActiveConfiguration(db: Db, project: string, id: number): Promise<ConfigurationRow[]> {
  return db<ConfigurationRow[]>`
    update promotion_configurations c
    set active = (c.id = ${id}), activated_at = case when c.id = ${id} then now() else c.activated_at end
    where c.project = ${project} and (c.active or c.id = ${id}) and c.active is distinct from (c.id = ${id})
      and exists (select from promotion_configurations t where t.project = ${project} and t.id = ${id})
    returning c.*`;
}
