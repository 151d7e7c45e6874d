import fc from 'fast-check';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import t from 'tap';
import { Weekdays } from '../subjects/formats/time.js';
import { fireInstant, latestFireAtOrBefore, wallTimeOf } from '../src/domain/closings/schedule.js';
import { orderRates } from '../src/domain/closings/order-rates.js';
import { decimal, text } from '../src/domain/dsfinvk/csv.js';
import { indexXml } from '../src/domain/dsfinvk/index-xml.js';
import { vatKeyOf } from '../src/domain/dsfinvk/codes.js';
import { positionsOf } from '../src/domain/dsfinvk/orders.js';
import { parseCsv } from './support/dsfinvk-validator.js';

/** The pure rules under closings: fire times in a zone, the figures of an order, DSFinV-K numbers. */

const Zones = ['Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kathmandu', 'America/Santiago', 'Pacific/Chatham', 'UTC'];
const minute = 60_000;

t.test('a fire time has the wall time asked for, at its first occurrence, or the first minute after a wall time the zone skips', async (t) => {
  fc.assert(
    fc.property(
      fc.constantFrom(...Zones),
      fc.date({ min: new Date('2020-01-01T00:00:00Z'), max: new Date('2035-12-31T00:00:00Z'), noInvalidDate: true }),
      fc.integer({ min: 0, max: 23 }),
      fc.integer({ min: 0, max: 59 }),
      (zone, day, hour, min) => {
        const date = { year: day.getUTCFullYear(), month: day.getUTCMonth() + 1, day: day.getUTCDate() };
        const wanted = Date.UTC(date.year, date.month - 1, date.day, hour, min);
        const fire = fireInstant(date, hour, min, zone).getTime();
        const wall = wallTimeOf(fire, zone);
        if (wall === wanted) {
          // The first occurrence: no earlier instant of the last three hours shows the same wall time.
          for (let back = minute; back <= 3 * 60 * minute; back += 15 * minute) if (wallTimeOf(fire - back, zone) === wanted) return false;
          return true;
        }
        // Skipped: the fire time is the first wall minute after it, and the minute before it was before the wanted one.
        return wall > wanted && wallTimeOf(fire - minute, zone) < wanted;
      },
    ),
    { numRuns: 3000 },
  );
  t.pass('holds for every generated zone, day and time');
});

t.test('the latest fire time is at or before now, on a listed day, and no listed fire time lies between it and now', async (t) => {
  fc.assert(
    fc.property(
      fc.constantFrom(...Zones),
      fc.subarray([...Weekdays], { minLength: 1 }),
      fc.integer({ min: 0, max: 24 }),
      fc.integer({ min: 0, max: 59 }),
      fc.date({ min: new Date('2021-01-01T00:00:00Z'), max: new Date('2034-12-31T00:00:00Z'), noInvalidDate: true }),
      (location, days, hour, rawMinute, now) => {
        const spec = { days, hour, minute: hour === 24 ? 0 : rawMinute, location };
        const latest = latestFireAtOrBefore(spec, now);
        if (!latest || latest > now) return false;
        // A minute later than the latest, the latest one is still the latest unless a new one is due.
        const again = latestFireAtOrBefore(spec, new Date(latest.getTime() + 1));
        return again?.getTime() === latest.getTime() && now.getTime() - latest.getTime() <= 8 * 86_400_000;
      },
    ),
    { numRuns: 1000 },
  );
  t.pass('holds for every generated schedule and time');
});

const Amount = fc.integer({ min: -5_000_000, max: 5_000_000 });
// Rates as checkouts write them, and any text a PoS's pricing update may write (up to 16 characters).
const Rate = fc.oneof(fc.constantFrom('19', '7', '5.5', '0', '16', ''), fc.string({ maxLength: 16 }));

t.test('an order\'s rates add up to its price, and its positions to its rates, whatever its figures and rate texts say (never failing)', async (t) => {
  fc.assert(
    fc.property(
      fc.array(fc.record({ totalPrice: Amount, taxRate: Rate, type: fc.constantFrom('default', 'deposit', 'promotion', 'coupon') }), { maxLength: 8 }),
      fc.option(Amount),
      fc.boolean(),
      (lines, price, withFigures) => {
        const gross = lines.reduce((sum, l) => sum + l.totalPrice, 0);
        const order = {
          id: 'o', sequenceNumber: 1, state: 'final', startedAt: '', finalizedAt: '', paymentMethod: 'cash', paidAmount: price ?? gross,
          lineItems: lines.map((l, i) => ({ ...l, id: `l${i}`, amount: 1 })),
          price: withFigures ? { price: price ?? gross, taxPre: Object.fromEntries(lines.map((l) => [l.taxRate, 0])), tax: {} } : { price: price ?? gross },
        };
        const rates = orderRates(order);
        if (rates.reduce((sum, r) => sum + r.gross, 0) !== order.price.price) return false;
        if (rates.some((r) => r.gross !== r.net + r.tax)) return false;
        if (rates.some((r) => r.gross === 0 && r.net === 0 && r.tax === 0)) return false;
        const { vat, positions } = positionsOf(order, 'EUR');
        if (new Set(vat.map((v) => v.vatKey)).size !== vat.length) return false;
        for (const v of vat) {
          const sameKey = rates.filter((r) => vatKeyOf(r.rate).key === v.vatKey);
          if (v.rate.gross !== sameKey.reduce((sum, r) => sum + r.gross, 0) || v.rate.tax !== sameKey.reduce((sum, r) => sum + r.tax, 0)) return false;
          const of = positions.filter((p) => p.vatKey === v.vatKey);
          if (of.reduce((sum, p) => sum + p.gross, 0) !== v.rate.gross || of.reduce((sum, p) => sum + p.tax, 0) !== v.rate.tax) return false;
        }
        return positions.every((p) => p.gross === p.net + p.tax);
      },
    ),
    { numRuns: 2000 },
  );
  t.pass('holds for every generated order');
});

t.test('DSFinV-K numbers have exactly their accuracy, a decimal comma and no grouping, rounded half away from zero', async (t) => {
  fc.assert(
    fc.property(fc.bigInt({ min: -(10n ** 15n), max: 10n ** 15n }), fc.integer({ min: 0, max: 6 }), fc.integer({ min: 0, max: 5 }), (units, scale, accuracy) => {
      const text = decimal({ units: Number(units), scale }, accuracy);
      if (!new RegExp(`^-?\\d+${accuracy ? `,\\d{${accuracy}}` : ''}$`).test(text)) return false;
      // Reference: exact rational arithmetic.
      const negative = units < 0n;
      const magnitude = negative ? -units : units;
      const num = magnitude * 10n ** BigInt(accuracy);
      const den = 10n ** BigInt(scale);
      let q = num / den;
      if ((num % den) * 2n >= den) q += 1n;
      const digits = q.toString().padStart(accuracy + 1, '0');
      const body = accuracy ? `${digits.slice(0, -accuracy)},${digits.slice(-accuracy)}` : digits;
      return text === (negative && q > 0n ? `-${body}` : body);
    }),
    { numRuns: 3000 },
  );
  t.equal(decimal({ units: 1234, scale: 2 }, 2), '12,34');
  t.equal(decimal({ units: -5, scale: 2 }, 5), '-0,05000');
  t.equal(decimal(7, 0), '7');
  t.equal(decimal({ units: 1999, scale: 3 }, 2), '2,00');
});

/** Any text, control characters, noncharacters and lone surrogates among it. */
const anyText = fc.string({ unit: fc.oneof(fc.constantFrom('\u0001', '\u0007', '\t', '\r', '\n', '\u007f', '\u0085', '\ufffe', '\uffff', '\ud800', '\udc00', '"', ';', '&', '<'), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })), maxLength: 40 });
/** The model: each run of control characters, U+FFFE, U+FFFF or lone surrogates as one space. */
const withoutUnprintable = (value: string) => value.replace(/[\p{Cc}\ufffe\uffff\p{Cs}]+/gu, ' ');
const XmlChars = /^[\t\n\r\u0020-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]*$/u;

t.test('a DSFinV-K text field is one well-formed CSV field without control characters, whatever the text', async (t) => {
  fc.assert(
    fc.property(anyText, (value) => {
      const problems: string[] = [];
      const records = parseCsv(`${text(value, 255)};${text('next', 10)}\r\n`, problems, 'test.csv');
      const [field, next] = records[0] ?? [];
      return problems.length === 0 && records.length === 1 && next === 'next' && field === withoutUnprintable(value);
    }),
    { numRuns: 2000 },
  );
  t.equal(text('Käse "Gouda";\u0001\u0002am\r\nStück', 60), '"Käse ""Gouda""; am Stück"');
});

t.test("index.xml is well-formed XML whatever the company's name and address say, and reads back without the control characters", async (t) => {
  const parser = new XMLParser({ parseTagValue: false, trimValues: false, processEntities: true });
  fc.assert(
    fc.property(anyText, anyText, (name, location) => {
      const xml = indexXml({ name, location, comment: 'DSFinV-K 2.3' }, 'Kassenabschluss 1 der Kasse s1');
      if (XMLValidator.validate(xml) !== true || !XmlChars.test(xml)) return false;
      const supplier = parser.parse(xml).DataSet.DataSupplier;
      return String(supplier.Name ?? '') === withoutUnprintable(name) && String(supplier.Location ?? '') === withoutUnprintable(location);
    }),
    // index.xml is some 60 KB (every table's columns): a run parses it twice.
    { numRuns: 150 },
  );
  t.match(indexXml({ name: 'Acme\u0001& Söhne <GmbH>', location: 'Berlin', comment: '' }, 'm'), '<Name>Acme &amp; Söhne &lt;GmbH&gt;</Name>');
});
