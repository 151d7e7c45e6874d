import { resolvePrice } from '../../src/domain/pricing.js';
import { AppError } from '../../src/errors.js';
import type { Sql } from '../../src/infra/postgres.js';
import { route, type Route } from '../../src/messaging/worker.js';
import { products, type Product, type StoredProduct } from '../../subjects/products.js';
import { readSettings } from '../settings/sql.js';
import { findShop } from '../shops/sql.js';
import * as db from './products.sql.js';
import { loadProductPrices, shopCategories } from './pricing.sql.js';

export function productRoutes(sql: Sql): Route[] {
  const stored = async (project: string, sku: string): Promise<StoredProduct> => {
    const json = await db.findProductJson(sql, project, sku);
    if (!json) throw AppError.notFound(`no product with SKU ${sku}`);
    return JSON.parse(json) as StoredProduct;
  };

  return [
    route(products.get, ({ project, sku }) => stored(project, sku)),
    route(products.getByPlu, async ({ project, plu }) => {
      const sku = await db.findSkuByPlu(sql, project, plu);
      if (!sku) throw AppError.notFound(`no product with PLU ${plu}`);
      return stored(project, sku);
    }),
    route(products.put, async ({ project, product }) => {
      const { refused, created } = await db.writeProducts(sql, project, [db.productWrite(0, product)], new Date());
      const reason = refused.get(0);
      if (reason) throw AppError.conflict(reason);
      return { product: await stored(project, product.sku), created: created.has(product.sku) };
    }),
    route(products.delete, async ({ project, sku }) => {
      if (!(await db.deleteProduct(sql, project, sku))) throw AppError.notFound(`no product with SKU ${sku}`);
      return null;
    }),
    route(products.listPage, async ({ project, after, pageSize, ...filter }) => {
      const rows = await db.listProductsJson(sql, project, filter, after, pageSize);
      return { products: rows.map((r) => r.json), next: rows.length === pageSize ? (rows.at(-1)?.sku ?? null) : null };
    }),
    route(products.search, async ({ project, search, shopID, showProductsWithoutPrices, page, perPage }) => {
      if (!(await findShop(sql, project, shopID))) throw AppError.notFound(`no shop with id ${shopID}`);
      const [categories, { currency }] = await Promise.all([shopCategories(sql, project, shopID), readSettings(sql, project)]);
      const at = new Date();
      const found = db.searchProducts(sql, project, search, { categories, currency, at, withoutPrices: showProductsWithoutPrices });
      const [totalItems, rows] = await Promise.all([found.count(), found.page(page * perPage, perPage)]);
      const prices = await loadProductPrices(sql, project, rows.map((r) => r.sku), categories);
      const query = { categories, at, quantity: 1, loyaltyCard: false, currency };
      return {
        products: rows.map(({ sku, doc }) => {
          const price = prices.get(sku);
          return searchItem(doc, price ? (resolvePrice(price, query)?.listPrice ?? null) : null);
        }),
        pagination: { page, perPage, totalPages: Math.ceil(totalItems / perPage), totalItems },
      };
    }),
    route(products.deleteAll, async ({ project }) => {
      await db.deleteCatalog(sql, project);
      return null;
    }),
  ];
}

function searchItem(p: Product, price: number | null) {
  return {
    type: p.productType,
    price,
    sku: p.sku,
    name: p.name,
    description: p.description,
    subtitle: p.subtitle,
    basePrice: p.basePrice,
    additionalAttributes: p.additionalAttributes,
    saleRestriction: p.saleRestriction,
    referenceUnit: p.referenceUnit,
    encodingUnit: p.encodingUnit,
    weighByCustomer: p.weighByCustomer,
    saleStop: p.saleStop,
    notForSale: p.notForSale,
    quantityPriceKey: p.quantityPriceKey,
    searchable: p.searchable,
    allowedOnDeviceTypes: p.allowedOnDeviceTypes,
    ...(p.maxSaleQuantity === undefined ? {} : { maxSaleQuantity: p.maxSaleQuantity }),
    maxSaleText: p.maxSaleText,
  };
}
