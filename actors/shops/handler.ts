import { randomUUID } from 'node:crypto';
import type { Sql } from '../../src/infra/postgres.js';
import { hasPgCode, PgErrorCode } from '../../src/infra/postgres.js';
import { AppError } from '../../src/errors.js';
import { route, type Route } from '../../src/messaging/worker.js';
import { shopPath, shops, type Shop, type ShopInput } from '../../subjects/shops.js';
import * as db from './sql.js';

/** Shops of a project: plain records, one statement per operation. */
export function createShopsActor(deps: { sql: Sql }): Route[] {
  const { sql } = deps;
  return [
    route(shops.list, async ({ project }) => (await db.listShops(sql, project)).map(toShop)),
    route(shops.get, async ({ project, id }) => toShop(found(await db.findShop(sql, project, id), id))),
    route(shops.findByExternalId, async ({ project, externalId }) => {
      const row = await db.findShopByExternalId(sql, project, externalId);
      if (!row) throw AppError.notFound(`no shop with externalId ${externalId}`);
      return toShop(row);
    }),
    route(shops.create, async ({ project, shop }) => toShop(await insert(sql, project, shop.id ?? randomUUID(), shop))),
    route(shops.update, async ({ project, id, shop }) => {
      if (shop.id !== undefined && shop.id !== id) throw AppError.badRequest(`the body's id ${shop.id} differs from the path's id ${id}`);
      try {
        return toShop(found(await db.updateShop(sql, project, id, shop), id));
      } catch (err) {
        throw duplicateExternalId(err, shop) ?? err;
      }
    }),
    route(shops.delete, async ({ project, id }) => {
      if (!(await db.deleteShop(sql, project, id))) throw notFound(id);
      return null;
    }),
  ];
}

async function insert(sql: Sql, project: string, id: string, shop: ShopInput): Promise<db.ShopRow> {
  try {
    return await db.insertShop(sql, project, id, shop);
  } catch (err) {
    if (hasPgCode(err, PgErrorCode.uniqueViolation) && err.constraint_name === 'shops_pkey') {
      throw AppError.conflict(`a shop with id ${id} already exists`);
    }
    throw duplicateExternalId(err, shop) ?? err;
  }
}

function duplicateExternalId(err: unknown, shop: ShopInput): AppError | undefined {
  if (hasPgCode(err, PgErrorCode.uniqueViolation) && err.constraint_name === 'shops_project_external_id_key') {
    return AppError.conflict(`another shop already has externalId ${shop.externalId}`);
  }
  return undefined;
}

function found(row: db.ShopRow | undefined, id: string): db.ShopRow {
  if (!row) throw notFound(id);
  return row;
}

function notFound(id: string): AppError {
  return AppError.notFound(`no shop with id ${id}`);
}

export function toShop(row: db.ShopRow): Shop {
  return {
    id: row.id,
    project: row.project,
    externalId: row.external_id ?? '',
    name: row.name,
    email: row.email,
    phone: row.phone,
    street: row.street,
    zip: row.zip,
    city: row.city,
    state: row.state,
    country: row.country,
    // The app SDKs need numbers: 0 while unknown.
    lat: row.lat ?? 0,
    lon: row.lon ?? 0,
    openingHoursSpecification: row.opening_hours,
    services: row.services,
    external: row.external,
    links: { self: { href: shopPath(row.project, row.id) } },
  };
}
