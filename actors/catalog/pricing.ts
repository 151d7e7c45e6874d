import { randomUUID } from 'node:crypto';
import { AppError } from '../../src/errors.js';
import type { Sql } from '../../src/infra/postgres.js';
import { route, type Route } from '../../src/messaging/worker.js';
import { pricing, pricingCategoryPath, pricingPath, productPath, type PriceV2, type Pricing, type PricingCategory } from '../../subjects/pricing.js';
import * as db from './pricing.sql.js';

export function pricingRoutes(sql: Sql): Route[] {
  const category = async (project: string, id: string): Promise<PricingCategory> => {
    const row = await db.findCategory(sql, project, id);
    if (!row) throw AppError.notFound(`no pricing category with id ${id}`);
    return toCategory(project, row);
  };
  const legacyPricing = async (project: string, sku: string): Promise<Pricing> => {
    const prices = await db.legacyPricesOfSku(sql, project, sku);
    if (!prices.length) throw AppError.notFound(`no pricing for SKU ${sku}`);
    return { sku, project, prices, links: { self: { href: pricingPath(project, sku) }, product: { href: productPath(project, sku) } } };
  };

  return [
    route(pricing.bySku, async ({ project, sku }) => {
      const rows = await db.categoryPricesOfSku(sql, project, sku);
      return rows.length ? [{ sku, pricings: rows.map((r) => ({ category: r.category, prices: [...r.prices].sort(byTierThenValidFrom) })) }] : [];
    }),
    route(pricing.listCategories, async ({ project }) => ({
      categories: (await db.listCategories(sql, project)).map((row) => toCategory(project, row)),
      links: { self: { href: `/${project}/pricing/categories` } },
    })),
    route(pricing.getCategory, ({ project, id }) => category(project, id)),
    route(pricing.createCategory, async ({ project, category: input }) => {
      const id = input.id ?? randomUUID();
      if (!(await db.saveCategory(sql, project, id, input, 'create'))) throw AppError.conflict(`a pricing category with id ${id} already exists`);
      return category(project, id);
    }),
    route(pricing.putCategory, async ({ project, id, category: input }) => {
      if (input.id !== undefined && input.id !== id) throw AppError.badRequest(`the body's id ${input.id} differs from the path's id ${id}`);
      if (!(await db.saveCategory(sql, project, id, input, 'replace'))) throw AppError.notFound(`no pricing category with id ${id}`);
      return category(project, id);
    }),
    route(pricing.getPricing, ({ project, sku }) => legacyPricing(project, sku)),
    route(pricing.putPricing, async ({ project, pricing: input }) => {
      await db.writePricings(sql, project, [{ line: 0, op: 'put', pricing: input }], new Date());
      return input.prices.length
        ? legacyPricing(project, input.sku)
        : { sku: input.sku, project, prices: [], links: { self: { href: pricingPath(project, input.sku) }, product: { href: productPath(project, input.sku) } } };
    }),
    route(pricing.deletePricing, async ({ project, sku }) => {
      if (!(await db.deleteLegacyPricing(sql, project, sku, new Date()))) throw AppError.notFound(`no pricing for SKU ${sku}`);
      return null;
    }),
    route(pricing.deleteAllPricings, async ({ project }) => {
      await db.deleteAllLegacyPricings(sql, project);
      return null;
    }),
    route(pricing.deletePrice, async ({ project, sku, category: id }) => {
      if (!(await db.deleteLegacyPrice(sql, project, sku, id))) throw AppError.notFound(`no price for SKU ${sku} in category ${id}`);
      return null;
    }),
  ];
}

function toCategory(project: string, row: { id: string; name: string | null; priority: number; shops: string[] }): PricingCategory {
  return { id: row.id, project, name: row.name, priority: row.priority, shops: row.shops.map((id) => ({ id })), links: { self: { href: pricingCategoryPath(project, row.id) } } };
}

/** The spec's order: by tier, then by validFrom with the prices that have none first. */
function byTierThenValidFrom(a: PriceV2, b: PriceV2): number {
  if (a.tier !== b.tier) return a.tier < b.tier ? -1 : 1;
  if (a.validFrom === b.validFrom) return 0;
  if (a.validFrom === undefined) return -1;
  if (b.validFrom === undefined) return 1;
  return a.validFrom < b.validFrom ? -1 : 1;
}
