import type { Sql } from '../../src/infra/postgres.js';
import type { ShopInput } from '../../subjects/shops.js';

export interface ShopRow {
  project: string;
  id: string;
  external_id: string | null;
  name: string;
  email: string;
  phone: string;
  street: string;
  zip: string;
  city: string;
  state: string;
  country: string;
  lat: number | null;
  lon: number | null;
  opening_hours: ShopInput['openingHoursSpecification'];
  services: string[];
  external: Record<string, unknown>;
}

function shopColumns(sql: Sql, input: ShopInput) {
  return {
    external_id: input.externalId || null,
    name: input.name,
    email: input.email ?? '',
    phone: input.phone ?? '',
    street: input.street ?? '',
    zip: input.zip ?? '',
    city: input.city ?? '',
    state: input.state ?? '',
    country: input.country ?? '',
    lat: input.lat ?? null,
    lon: input.lon ?? null,
    opening_hours: sql.json(input.openingHoursSpecification),
    services: input.services,
    external: sql.json(input.external as Parameters<Sql['json']>[0]),
  };
}

export function listShops(sql: Sql, project: string) {
  return sql<ShopRow[]>`select * from shops where project = ${project} order by created_at, id`;
}

export async function findShop(sql: Sql, project: string, id: string): Promise<ShopRow | undefined> {
  const [row] = await sql<ShopRow[]>`select * from shops where project = ${project} and id = ${id}`;
  return row;
}

export async function findShopByExternalId(sql: Sql, project: string, externalId: string): Promise<ShopRow | undefined> {
  const [row] = await sql<ShopRow[]>`select * from shops where project = ${project} and external_id = ${externalId}`;
  return row;
}

export async function insertShop(sql: Sql, project: string, id: string, input: ShopInput): Promise<ShopRow> {
  const [row] = await sql<ShopRow[]>`insert into shops ${sql({ project, id, ...shopColumns(sql, input) })} returning *`;
  return row as ShopRow;
}

export async function updateShop(sql: Sql, project: string, id: string, input: ShopInput): Promise<ShopRow | undefined> {
  const [row] = await sql<ShopRow[]>`
    update shops set ${sql(shopColumns(sql, input))}, updated_at = now()
    where project = ${project} and id = ${id} returning *`;
  return row;
}

export async function deleteShop(sql: Sql, project: string, id: string): Promise<boolean> {
  const result = await sql`delete from shops where project = ${project} and id = ${id}`;
  return result.count > 0;
}
