import { createHash, randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { loadMigrations, migrate } from '../../src/infra/migrate.js';
import { createLogger } from '../../src/logger.js';

/**
 * One fresh database per test file, cloned from a template that holds the migrated schema. The
 * template is named after the migrations' checksums, so a new migration builds a new template once.
 */
export const AdminUrl = adminUrl(process.env.TEST_DATABASE_URL);

/** `embedded` is npm test's word (scripts/test.ts starts that Postgres and passes its URL on). */
function adminUrl(configured: string | undefined): string {
  if (configured === 'embedded') throw new Error('TEST_DATABASE_URL=embedded is for npm test, which starts the embedded Postgres: run `npm test -- <file>`');
  return configured ?? 'postgres://postgres@127.0.0.1:5432/postgres';
}
const TemplateLock = 7_420_002;
const StaleAfterSeconds = 3600;

export interface TestDatabase {
  url: string;
  name: string;
  /** Drops the database; fails when a connection is still open (a leaked pool). */
  drop(): Promise<void>;
}

/** `empty`: a database without the schema (no template), for tests of the migrations themselves. */
export async function createTestDatabase(options: { empty?: boolean } = {}): Promise<TestDatabase> {
  const admin = postgres(AdminUrl, { max: 1, onnotice: () => {} });
  try {
    const template = options.empty ? 'template0' : await ensureTemplate(admin);
    const name = `cp_test_${Math.floor(Date.now() / 1000)}_${randomBytes(4).toString('hex')}`;
    await admin.unsafe(`create database ${name} template ${template}`);
    return {
      name,
      url: urlFor(name),
      async drop() {
        const db = postgres(AdminUrl, { max: 1, onnotice: () => {} });
        try {
          const [open] = await db<{ n: number }[]>`select count(*)::int as n from pg_stat_activity where datname = ${name}`;
          await db.unsafe(`drop database if exists ${name} with (force)`);
          if (open && open.n > 0) throw new Error(`${open.n} connection(s) to the test database were still open after the service stopped`);
        } finally {
          await db.end();
        }
      },
    };
  } finally {
    await admin.end();
  }
}

function urlFor(database: string): string {
  const url = new URL(AdminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

async function ensureTemplate(admin: postgres.Sql): Promise<string> {
  const migrations = await loadMigrations();
  const hash = createHash('sha256').update(migrations.map((m) => m.checksum).join()).digest('hex').slice(0, 12);
  const template = `cp_template_${hash}`;
  const [exists] = await admin`select 1 from pg_database where datname = ${template}`;
  if (exists) return template;

  await admin`select pg_advisory_lock(${TemplateLock})`;
  try {
    const [built] = await admin`select 1 from pg_database where datname = ${template}`;
    if (built) return template;
    await dropStale(admin);
    const building = `${template}_building`;
    await admin.unsafe(`drop database if exists ${building}`);
    await admin.unsafe(`create database ${building}`);
    const sql = postgres(urlFor(building), { max: 1, onnotice: () => {} });
    try {
      await migrate(sql, migrations, createLogger({ level: 'silent' }));
    } finally {
      await sql.end();
    }
    // Renamed only when complete, so a file never clones a half-built template.
    await admin.unsafe(`alter database ${building} rename to ${template}`);
    return template;
  } finally {
    await admin`select pg_advisory_unlock(${TemplateLock})`;
  }
}

/** Test databases of runs that crashed before their teardown, and templates of older schemas. */
async function dropStale(admin: postgres.Sql): Promise<void> {
  const rows = await admin<{ datname: string }[]>`select datname from pg_database where datname like 'cp\\_%'`;
  const now = Math.floor(Date.now() / 1000);
  for (const { datname } of rows) {
    const created = /^cp_test_(\d+)_/.exec(datname)?.[1];
    const stale = datname.startsWith('cp_template_') || (created !== undefined && now - Number(created) > StaleAfterSeconds);
    if (stale) await admin.unsafe(`drop database if exists ${datname} with (force)`);
  }
}
