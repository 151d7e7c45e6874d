import { AppError } from '../../src/errors.js';
import type { Sql } from '../../src/infra/postgres.js';
import { route, type Route } from '../../src/messaging/worker.js';
import { closings, schedulePath, type ClosingSchedule, type ClosingScheduleInput } from '../../subjects/closings.js';
import * as db from './sql.js';

/** Closing schedules of a project: plain records. The trigger (trigger.ts) fires them. */
export function createClosingSchedulesActor(deps: { sql: Sql }): Route[] {
  const { sql } = deps;

  const existingShop = async (project: string, input: ClosingScheduleInput) => {
    if (!(await db.shopExists(sql, project, input.shop))) throw AppError.badRequest(`shop: no shop with id ${input.shop}`, [{ path: 'shop', message: 'no such shop' }]);
  };

  return [
    route(closings.listSchedules, async ({ project }) => ({ schedules: (await db.listSchedules(sql, project)).map(toSchedule) })),

    route(closings.getSchedule, async ({ project, id }) => toSchedule(found(await db.findSchedule(sql, project, id), id))),

    route(closings.createSchedule, async ({ project, schedule }) => {
      await existingShop(project, schedule);
      return toSchedule(await db.insertSchedule(sql, project, schedule));
    }),

    route(closings.updateSchedule, async ({ project, id, schedule }) => {
      // An unknown schedule is 404 whatever the body says.
      found(await db.findSchedule(sql, project, id), id);
      await existingShop(project, schedule);
      return toSchedule(found(await db.updateSchedule(sql, project, id, schedule), id));
    }),

    route(closings.deleteSchedule, async ({ project, id }) => {
      if (!(await db.deleteSchedule(sql, project, id))) throw notFound(id);
      return null;
    }),
  ];
}

function found(row: db.ScheduleRow | undefined, id: number): db.ScheduleRow {
  if (!row) throw notFound(id);
  return row;
}

function notFound(id: number): AppError {
  return AppError.notFound(`no closing schedule with id ${id}`);
}

function toSchedule(row: db.ScheduleRow): ClosingSchedule {
  const id = Number(row.id);
  return {
    id,
    project: row.project,
    shop: row.shop_id,
    days: row.days,
    hour: row.hour,
    minute: row.minute,
    location: row.location,
    mode: row.mode,
    includeAllStates: row.include_all_states,
    formats: row.formats,
    ...(row.append_batch_every === null ? {} : { appendBatchEvery: row.append_batch_every }),
    batchFormats: row.batch_formats,
    links: { self: { href: schedulePath(row.project, id) } },
  };
}
