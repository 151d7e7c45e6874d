import type { Sql } from '../../src/infra/postgres.js';
import type { Weekday } from '../../subjects/formats/time.js';
import type { ClosingScheduleInput, LogFormat, ScheduleMode } from '../../subjects/closings.js';
import { outboxRows, type OutboxEvent } from '../outbox/sql.js';

export interface ScheduleRow {
  id: string;
  project: string;
  shop_id: string;
  days: Weekday[];
  hour: number;
  minute: number;
  location: string;
  mode: ScheduleMode;
  include_all_states: boolean;
  formats: LogFormat[];
  append_batch_every: string | null;
  batch_formats: string[];
  fired_until: Date;
  batched_until: Date;
}

function columns(input: ClosingScheduleInput) {
  return {
    shop_id: input.shop,
    days: input.days,
    hour: input.hour,
    minute: input.minute,
    location: input.location,
    mode: input.mode,
    include_all_states: input.includeAllStates,
    formats: input.formats,
    append_batch_every: input.appendBatchEvery ?? null,
    batch_formats: input.batchFormats,
  };
}

export async function shopExists(sql: Sql, project: string, shopId: string): Promise<boolean> {
  const [row] = await sql`select 1 from shops where project = ${project} and id = ${shopId}`;
  return row !== undefined;
}

export function listSchedules(sql: Sql, project: string) {
  return sql<ScheduleRow[]>`select * from closing_schedules where project = ${project} order by id`;
}

export async function findSchedule(sql: Sql, project: string, id: number): Promise<ScheduleRow | undefined> {
  const [row] = await sql<ScheduleRow[]>`select * from closing_schedules where project = ${project} and id = ${id}`;
  return row;
}

/** A new schedule fires first at its first fire time after now. */
export async function insertSchedule(sql: Sql, project: string, input: ClosingScheduleInput): Promise<ScheduleRow> {
  const c = columns(input);
  const [row] = await sql<ScheduleRow[]>`
    insert into closing_schedules (
      project, shop_id, days, hour, minute, location, mode, include_all_states, formats, append_batch_every, batch_formats, fired_until
    ) values (
      ${project}, ${c.shop_id}, ${c.days}, ${c.hour}, ${c.minute}, ${c.location}, ${c.mode}, ${c.include_all_states}, ${c.formats},
      ${c.append_batch_every}, ${c.batch_formats}, now()
    )
    returning *`;
  return row!;
}

/** A changed schedule fires only at fire times after the change, never for one that passed before it. */
export async function updateSchedule(sql: Sql, project: string, id: number, input: ClosingScheduleInput): Promise<ScheduleRow | undefined> {
  const [row] = await sql<ScheduleRow[]>`
    update closing_schedules set ${sql(columns(input))}, fired_until = greatest(fired_until, now()), updated_at = now()
    where project = ${project} and id = ${id} returning *`;
  return row;
}

export async function deleteSchedule(sql: Sql, project: string, id: number): Promise<boolean> {
  const result = await sql`delete from closing_schedules where project = ${project} and id = ${id}`;
  return result.count > 0;
}

/** Every schedule of every project, for a tick (a few columns only). */
export function schedulesToTick(sql: Sql) {
  return sql<ScheduleRow[]>`
    select id, project, shop_id, days, hour, minute, location, mode, include_all_states, formats, fired_until
    from closing_schedules`;
}

/**
 * Claims a fire time of a schedule, in one statement: moves the schedule's watermark to it (only
 * forward), inserts the claim (unique on schedule and fire time) and writes the trigger to the
 * outbox. Any number of processes may try the same claim: one gets it. False when it was taken,
 * passed, or the schedule is gone.
 */
export async function claimFireTime(sql: Sql, scheduleId: string, fireAt: Date, trigger: OutboxEvent): Promise<boolean> {
  const [row] = await sql<{ claimed: number }[]>`
    with advanced as (
      update closing_schedules set fired_until = ${fireAt}
      where id = ${scheduleId} and fired_until < ${fireAt}
      returning id, project, shop_id
    ), claimed as (
      insert into closing_triggers (schedule_id, fire_at, project, shop_id)
      select id, ${fireAt}, project, shop_id from advanced
      on conflict do nothing
      returning schedule_id
    ), published as (
      insert into outbox (subject, payload, msg_id)
      select subject, payload, msg_id from (${outboxRows(sql, [trigger])}) e where exists (select from claimed)
    )
    select count(*)::int as claimed from claimed`;
  return row!.claimed === 1;
}

export interface BatchScheduleRow {
  id: string;
  project: string;
  shop_id: string;
  include_all_states: boolean;
  append_batch_every: string;
  batch_formats: string[];
  batched_until: Date;
}

/** The schedules that append batches (an interval and at least one batch format), for a batch tick. */
export function schedulesToBatch(sql: Sql) {
  return sql<BatchScheduleRow[]>`
    select id, project, shop_id, include_all_states, append_batch_every, batch_formats, batched_until
    from closing_schedules where append_batch_every is not null and cardinality(batch_formats) > 0`;
}

/**
 * Claims a batch time of a schedule, in one statement, as claimFireTime claims a fire time: moves
 * the schedule's batch watermark to it (only forward), inserts the claim (unique on schedule and
 * batch time) and writes the batch work to the outbox. One of any number of processes gets it.
 */
export async function claimBatchTime(sql: Sql, scheduleId: string, batchAt: Date, work: OutboxEvent): Promise<boolean> {
  const [row] = await sql<{ claimed: number }[]>`
    with advanced as (
      update closing_schedules set batched_until = ${batchAt}
      where id = ${scheduleId} and batched_until < ${batchAt}
      returning id, project, shop_id
    ), claimed as (
      insert into closing_batches (schedule_id, batch_at, project, shop_id)
      select id, ${batchAt}, project, shop_id from advanced
      on conflict do nothing
      returning schedule_id
    ), published as (
      insert into outbox (subject, payload, msg_id)
      select subject, payload, msg_id from (${outboxRows(sql, [work])}) e where exists (select from claimed)
    )
    select count(*)::int as claimed from claimed`;
  return row!.claimed === 1;
}
