import postgres from 'postgres';
import t from 'tap';
import { createReceiptMaker } from '../actors/receipts/maker.js';
import type { Sql } from '../src/infra/postgres.js';
import { insertOrder, orderDocument } from './support/closing.js';
import { createTestDatabase } from './support/database.js';
import { TestProject } from './support/service.js';

/**
 * The receipt maker on its own (receipts made on the event loop, the file's own database): whoever
 * asks for a receipt being made waits for it rather than making it again. Through the API this
 * cannot be told apart (the store keeps the first of identical receipts), so renders are counted
 * here: each receipt made ends in one insert into receipts, stored or not.
 */
const database = await createTestDatabase();
const sql = postgres(database.url, { max: 2, onnotice: () => {} });
t.teardown(async () => {
  await sql.end();
  await database.drop();
});

let inserts = 0;
/** The pool, counting the statements that store a receipt. */
const counting = ((strings: TemplateStringsArray, ...values: unknown[]) => {
  if (strings.join('?').includes('insert into receipts')) inserts++;
  return sql(strings, ...(values as never[]));
}) as unknown as Sql;

const maker = createReceiptMaker({ sql: counting, timeZone: 'Europe/Berlin', renderThreads: 0, partChars: 4096 });
const lines = [{ type: 'default', sku: 'MILK', name: 'Vollmilch 1 l', amount: 2, price: 119, taxRate: '7' }];

t.test('makes a receipt once when many ask for it at the same moment', async (t) => {
  const order = orderDocument({ shop: 's1', lines });
  await insertOrder(sql, order);
  const doc = JSON.stringify(order.doc);
  inserts = 0;

  const all = await Promise.all(Array.from({ length: 8 }, () => maker.make(TestProject, order.id, doc)));
  t.equal(inserts, 1, 'rendered and stored once for the eight');
  t.ok(all.every((r) => r === all[0]), 'every asker answered with that one receipt');
  t.match(Buffer.from(all[0]!.part, 'base64').subarray(0, 5).toString(), '%PDF-');

  const again = await maker.make(TestProject, order.id, doc);
  t.equal(inserts, 2, 'once it was made, asking again makes it again (what the count would show of a second render)');
  t.same(again, all[0], 'and answers the receipt stored first');
  const [row] = await sql<{ n: number }[]>`select count(*)::int as n from receipts where order_id = ${order.id}`;
  t.equal(row!.n, 1, 'stored once');
});
