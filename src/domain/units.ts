/**
 * Units of weighable and measured products: the unit a price refers to (referenceUnit, such as kg)
 * and the unit a scanned code or cart item carries (encodingUnit, such as g).
 */
const Factors = {
  mg: ['mass', 0.001],
  g: ['mass', 1],
  kg: ['mass', 1000],
  ml: ['volume', 1],
  cl: ['volume', 10],
  dl: ['volume', 100],
  l: ['volume', 1000],
  mm: ['length', 1],
  cm: ['length', 10],
  dm: ['length', 100],
  m: ['length', 1000],
  m2: ['area', 1],
  m3: ['volume', 1_000_000],
  piece: ['count', 1],
} as const satisfies Record<string, readonly [string, number]>;

export type Unit = keyof typeof Factors;
export const Units = Object.keys(Factors) as Unit[];

export function isUnit(value: string): value is Unit {
  return Object.hasOwn(Factors, value);
}

/**
 * How many `to` units one `from` unit is (g → kg: 0.001). Undefined when the two measure different
 * things (g and l).
 */
export function conversionFactor(from: Unit, to: Unit): number | undefined {
  const [fromDimension, fromFactor] = Factors[from];
  const [toDimension, toFactor] = Factors[to];
  return fromDimension === toDimension ? fromFactor / toFactor : undefined;
}
