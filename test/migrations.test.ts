import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import postgres from 'postgres';
import { loadMigrations } from '../src/infra/migrate.js';
import { createTestDatabase } from './support/database.js';
import { runBuilt } from './support/process.js';

t.test('ten processes migrating one empty database at the same moment all start, and each migration is applied once', async (t) => {
  const db = await createTestDatabase({ empty: true });
  t.teardown(() => db.drop());
  const migrations = await loadMigrations();
  const sql = postgres(db.url, { max: 2, onnotice: () => {} });
  t.teardown(() => sql.end());
  process.setMaxListeners(process.getMaxListeners() + 10);

  // The moment: a transaction of this test creates the migrations table and holds it until all ten
  // processes wait on a lock (before, each on the table this one makes; now, one on it and nine on
  // the migration lock), then gives way, and they go on at once.
  const holder = await sql.reserve();
  await holder`begin`;
  await holder`create table schema_migrations (id integer)`;
  const runs = Array.from({ length: 10 }, () => runBuilt(t, 'scripts/migrate.js', { DATABASE_URL: db.url, LOG_FORMAT: 'json', LOG_LEVEL: 'info' }));
  const waiting = async () =>
    (await sql<{ n: number }[]>`select count(*)::int as n from pg_stat_activity where datname = ${db.name} and application_name = 'checkout-platform-migrate' and wait_event_type = 'Lock'`)[0]!.n;
  for (const deadline = Date.now() + 60_000; (await waiting()) < 10 && Date.now() < deadline; ) await sleep(50);
  t.equal(await waiting(), 10, 'all ten wait for the table at once');
  await holder`rollback`;
  holder.release();
  const codes = await Promise.all(runs.map((r) => r.exited));
  t.same(codes, Array(10).fill(0), `every process exits 0${codes.some((c) => c !== 0) ? `: ${runs.find((r) => r.child.exitCode !== 0)?.output().slice(-1500)}` : ''}`);

  // Each process says which migrations it applied: together, every migration once.
  const applied = runs.flatMap((r) =>
    r
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { msg: string; migration?: string })
      .filter((line) => line.msg === 'migration applied')
      .map((line) => line.migration!),
  );
  t.same(applied.toSorted(), migrations.map((m) => m.name).toSorted(), 'each migration applied by exactly one process');
  t.ok(runs.filter((r) => r.output().includes('"schema is current"')).length >= 1, 'the processes that came later found the schema current');

  const rows = await sql<{ id: number }[]>`select id from schema_migrations order by id`;
  t.same(rows.map((r) => r.id), migrations.map((m) => m.id), 'schema_migrations holds each one once');
  const [locks] = await sql<{ n: number }[]>`select count(*)::int as n from pg_locks where locktype = 'advisory'`;
  t.equal(locks!.n, 0, 'no process left the migration lock held');
});
