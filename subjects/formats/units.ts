/**
 * Units of weighable and measured products: the unit a price refers to (referenceUnit, such as kg)
 * and the unit a scanned code or cart item carries (encodingUnit, such as g). Each unit is an exact
 * integer number of its dimension's base unit, so conversions are exact ratios. The set is the
 * app SDKs' (m2e-1 is a tenth of a square metre, m2e-3 a thousandth) plus mg; other units are stored
 * and returned as given, but cannot price a sale by measure.
 */
const Base = {
  mg: ['mass', 1n],
  g: ['mass', 1_000n],
  dag: ['mass', 10_000n],
  hg: ['mass', 100_000n],
  kg: ['mass', 1_000_000n],
  t: ['mass', 1_000_000_000n],
  ml: ['volume', 1n],
  cm3: ['volume', 1n],
  cl: ['volume', 10n],
  dl: ['volume', 100n],
  l: ['volume', 1_000n],
  m3: ['volume', 1_000_000n],
  mm: ['length', 1n],
  cm: ['length', 10n],
  dm: ['length', 100n],
  m: ['length', 1_000n],
  cm2: ['area', 1n],
  'm2e-3': ['area', 10n],
  dm2: ['area', 100n],
  'm2e-1': ['area', 1_000n],
  m2: ['area', 10_000n],
  piece: ['count', 1n],
} as const satisfies Record<string, readonly [string, bigint]>;

export type Unit = keyof typeof Base;
export const Units = Object.keys(Base) as Unit[];

export function isUnit(value: string): value is Unit {
  return Object.hasOwn(Base, value);
}

/**
 * One `from` unit is numerator/denominator `to` units (g → kg: 1/1000). Undefined when the two
 * measure different things (g and l).
 */
export function unitRatio(from: Unit, to: Unit): { numerator: bigint; denominator: bigint } | undefined {
  const [fromDimension, fromBase] = Base[from];
  const [toDimension, toBase] = Base[to];
  return fromDimension === toDimension ? { numerator: fromBase, denominator: toBase } : undefined;
}
