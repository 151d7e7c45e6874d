import { gs1CheckDigit } from '../src/domain/codes.js';

/**
 * Realistic catalog data for benchmarks and tests: what a grocery retailer's nightly export holds.
 * Deterministic for a given index, so runs are comparable.
 */
const words = ['Bio', 'Vollmilch', 'Schokolade', 'Apfel', 'Banane', 'Käse', 'Brot', 'Joghurt', 'Kaffee', 'Tee', 'Nudeln', 'Reis', 'Tomaten', 'Gurke', 'Butter', 'Saft', 'Wasser', 'Müsli', 'Honig', 'Senf'];
const brands = ['Gut&Günstig', 'Alnatura', 'Milka', 'Ja!', 'Rewe Beste Wahl', 'Lindt', 'Barilla', 'Dallmayr'];

function pick<T>(items: readonly T[], n: number): T {
  return items[n % items.length] as T;
}

/** A product line of an import: codes for most, PLUs and weighable units for every 20th product. */
export function fixtureProduct(i: number) {
  const weighable = i % 20 === 0;
  const ean = String(4_000_000_000_000 + i * 7).slice(0, 12);
  return {
    sku: `SKU-${String(i).padStart(6, '0')}`,
    productType: weighable ? 'weighable' : 'default',
    name: `${pick(brands, i)} ${pick(words, i)} ${pick(words, i * 7 + 3)} ${100 + (i % 900)}g`,
    description: `${pick(words, i * 3)} aus kontrolliertem Anbau, ${pick(words, i * 5 + 1)} ohne Zusatzstoffe. Artikel ${i}.`,
    subtitle: pick(brands, i * 11),
    imageUrl: `https://images.example.com/products/${i}.jpg`,
    basePrice: `${(i % 50) + 1}.99 €/kg`,
    additionalAttributes: { origin: pick(['DE', 'NL', 'ES', 'IT'], i), shelf: `A${i % 40}` },
    taxCategory: i % 3 === 0 ? 'reduced' : 'normal',
    codes: [
      { code: `${ean}${gs1CheckDigit(ean)}`, template: 'default', isPrimary: true },
      ...(i % 4 === 0 ? [{ code: `2${String(i).padStart(11, '0').slice(-11)}`, template: 'default', isPrimary: false }] : []),
    ],
    ...(weighable ? { pluSet: [String(10_000 + i)], referenceUnit: 'kg', encodingUnit: 'g', weighByCustomer: true } : {}),
    ...(i % 10 === 0 ? { depositProduct: 'DEPOSIT-025' } : {}),
    ...(i % 50 === 0 ? { saleRestriction: 'min_age_18' } : {}),
    isDiscountable: i % 2 === 0,
    searchable: i % 100 !== 0,
  };
}

/** The v2 category prices of a fixture product: a list price, and a discount for every 5th. */
export function fixtureCategoryPricing(i: number, category = 'default') {
  const list = { price: `${i % 20}.${String(i % 100).padStart(2, '0')}`, currency: 'EUR', tier: 'list', quantity: 1 };
  return {
    sku: `SKU-${String(i).padStart(6, '0')}`,
    category,
    prices: i % 5 === 0 ? [list, { price: `${i % 20}.00`, currency: 'EUR', tier: 'discount', quantity: 1, validFrom: '2026-01-01T00:00:00Z', validTo: '2027-01-01T00:00:00Z' }] : [list],
  };
}
