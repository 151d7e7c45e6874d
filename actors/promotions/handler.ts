import { validateConfiguration } from '../../src/domain/promotions/index.js';
import { AppError } from '../../src/errors.js';
import { hasPgCode, inTransaction, type Sql, type TransactionSql } from '../../src/infra/postgres.js';
import { textPage } from '../../src/messaging/text-parts.js';
import { route, type Route } from '../../src/messaging/worker.js';
import { eventSubject } from '../../subjects/events.js';
import { promotions, type Configuration, type ConfigurationInput, type PromotionEvent, type PromotionEventName } from '../../subjects/promotions.js';
import { insertOutbox } from '../outbox/sql.js';
import * as db from './sql.js';

/** Configurations read per list part at most. */
const ListRows = 100;

export interface PromotionsDeps {
  sql: Sql;
  /** Called after a change wrote events (wakes the outbox relay). */
  eventsWritten(): void;
}

/**
 * Promotion configurations of a project. A configuration is checked by compiling it (the engine
 * names every problem with its path) in the project's currency before it is stored. Writers of a
 * project take turns on an advisory lock; each write stores its event in the same transaction.
 */
export function createPromotionsActor(deps: PromotionsDeps): Route[] {
  const { sql, eventsWritten } = deps;

  const write = async <T>(work: (tx: TransactionSql) => Promise<T>): Promise<T> => {
    const result = await inTransaction(sql, work);
    eventsWritten();
    return result;
  };

  return [
    route(promotions.list, async ({ project, after, maxBytes }) => {
      const rows = await db.listConfigurations(sql, project, after, ListRows);
      const { texts, next } = textPage(rows, ListRows, maxBytes, (row) => JSON.stringify(toConfiguration(row)), (row) => row.id);
      return { configurations: texts, next };
    }),

    route(promotions.get, async ({ project, id }) => toConfiguration(found(await db.findConfiguration(sql, project, id), id))),

    route(promotions.active, async ({ project }) => {
      const row = await db.findActiveConfiguration(sql, project);
      if (!row) throw AppError.notFound('no promotion configuration is active');
      return toConfiguration(row);
    }),

    route(promotions.create, async ({ project, configuration }) => {
      await check(sql, project, configuration);
      return write(async (tx) => {
        await db.lockProjectConfigurations(tx, project);
        const row = await db.insertConfiguration(tx, project, configuration.id, configuration).catch((err: unknown) => {
          throw outOfIds(err) ?? err;
        });
        if (!row) throw AppError.conflict(`a promotion configuration with id ${configuration.id} already exists`);
        const created = toConfiguration(row);
        await insertOutbox(tx, [event(project, 'created', row, created)]);
        return created;
      });
    }),

    route(promotions.update, async ({ project, id, configuration }) => {
      if (configuration.id !== undefined && configuration.id !== id) {
        throw AppError.badRequest(`the body's id ${configuration.id} differs from the path's id ${id}`);
      }
      await check(sql, project, configuration);
      return write(async (tx) => {
        await db.lockProjectConfigurations(tx, project);
        const row = found(await db.updateConfiguration(tx, project, id, configuration), id);
        const updated = toConfiguration(row);
        await insertOutbox(tx, [event(project, 'updated', row, updated)]);
        return updated;
      });
    }),

    route(promotions.activate, async ({ project, id }) =>
      write(async (tx) => {
        // Activations of a project take turns, so each switch starts from the one before it.
        await db.lockProjectConfigurations(tx, project);
        const changed = await db.switchActiveConfiguration(tx, project, id);
        const now = changed.find((r) => r.id === id);
        // Nothing changed: the configuration is active already (answered as it is), or missing.
        if (!now) return toConfiguration(found(await db.findConfiguration(tx, project, id), id));
        const previous = changed.find((r) => r.id !== id);
        const activated = toConfiguration(now);
        await insertOutbox(tx, [event(project, 'activated', now, activated, previous?.id ?? null)]);
        return activated;
      }),
    ),
  ];
}

/** A configuration the engine could not apply is refused, every problem named (the first in the message). */
async function check(sql: Sql, project: string, configuration: ConfigurationInput): Promise<void> {
  const issues = validateConfiguration(configuration, await db.projectCurrency(sql, project));
  if (!issues.length) return;
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more: see details)` : '';
  throw AppError.badRequest(`${issues[0]!.message}${more}`, issues.map((i) => ({ path: i.path, message: i.message })));
}

function found(row: db.ConfigurationRow | undefined, id: number): db.ConfigurationRow {
  if (!row) throw AppError.notFound(`no promotion configuration with id ${id}`);
  return row;
}

/** Ids are ints: past the largest, a configuration needs an id of the client's choosing. */
function outOfIds(err: unknown): AppError | undefined {
  // 22003 numeric_value_out_of_range: max(id) + 1 passed the integer range.
  return hasPgCode(err, '22003') ? AppError.conflict('no next free configuration id: give the configuration an id') : undefined;
}

function event(project: string, name: PromotionEventName, row: db.ConfigurationRow, configuration: Configuration, previousActiveID?: number | null) {
  const payload: PromotionEvent = {
    project,
    id: row.id,
    version: row.version,
    at: new Date().toISOString(),
    event: name,
    ...(previousActiveID === undefined ? {} : { previousActiveID }),
    configuration,
  };
  return { subject: eventSubject(project, 'promotion', String(row.id), name), payload };
}

export function toConfiguration(row: db.ConfigurationRow): Configuration {
  return { id: row.id, projectID: row.project, active: row.active, rounding: row.rounding, ranks: row.ranks, groups: row.groups };
}
