import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../logger.js';
import { hasPgCode, PgErrorCode, type Sql } from './postgres.js';

type ReservedSql = Awaited<ReturnType<Sql['reserve']>>;
import { projectRoot } from './project-root.js';

/**
 * Forward-only migrations: `migrations/NNNN_name.sql`, each applied in its own transaction and
 * recorded with a checksum. Processes starting together serialise on an advisory lock; a migration
 * edited after it was applied stops the start instead of leaving two schemas that share a name.
 */
export interface Migration {
  id: number;
  name: string;
  sql: string;
  checksum: string;
}

const MigrationLock = 7_420_001;

export function migrationsDir(): string {
  return path.join(projectRoot(), 'migrations');
}

export async function loadMigrations(dir = migrationsDir()): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f)).sort();
  return Promise.all(
    files.map(async (file) => {
      const sql = await readFile(path.join(dir, file), 'utf8');
      return {
        id: Number.parseInt(file.slice(0, 4), 10),
        name: file,
        sql,
        checksum: createHash('sha256').update(sql).digest('hex'),
      };
    }),
  );
}

export async function migrate(sql: Sql, migrations: readonly Migration[], log: Logger): Promise<string[]> {
  // One connection for all of it: the lock is its session's, held from before anything else (the
  // table's creation too: ten processes starting on an empty database raced to create it, and all
  // but one failed on pg_type's unique index) until the last migration, and released if it dies.
  const session = await sql.reserve();
  try {
    await session`select pg_advisory_lock(${MigrationLock})`;
    try {
      return await applyPending(session, migrations, log);
    } finally {
      await session`select pg_advisory_unlock(${MigrationLock})`.catch(() => {});
    }
  } finally {
    session.release();
  }
}

async function applyPending(session: ReservedSql, migrations: readonly Migration[], log: Logger): Promise<string[]> {
  await session`
    create table if not exists schema_migrations (
      id integer primary key,
      name text not null,
      checksum text not null,
      applied_at timestamptz not null default now()
    )`;
  const rows = await session<{ id: number; checksum: string }[]>`select id, checksum from schema_migrations`;
  const done = new Map(rows.map((r) => [r.id, r.checksum]));
  const applied: string[] = [];
  for (const migration of migrations) {
    const checksum = done.get(migration.id);
    if (checksum !== undefined) {
      if (checksum !== migration.checksum) throw new Error(`migration ${migration.name} was changed after it was applied; add a new migration instead`);
      continue;
    }
    // Each in a transaction of its own (the reserved connection's, so begun and ended here).
    await session`begin`;
    try {
      await session.unsafe(migration.sql);
      await session`insert into schema_migrations (id, name, checksum) values (${migration.id}, ${migration.name}, ${migration.checksum})`;
      await session`commit`;
    } catch (err) {
      await session`rollback`.catch(() => {});
      throw err;
    }
    log.info({ migration: migration.name }, 'migration applied');
    applied.push(migration.name);
  }
  return applied;
}

/** Names of the migrations not yet applied to this database (empty when the schema is current). */
export async function pendingMigrations(sql: Sql, migrations: readonly Migration[]): Promise<string[]> {
  const rows = await sql<{ id: number }[]>`select id from schema_migrations`.catch((err: unknown) => {
    if (hasPgCode(err, PgErrorCode.undefinedTable)) return [];
    throw err;
  });
  const done = new Set(rows.map((r) => r.id));
  return migrations.filter((m) => !done.has(m.id)).map((m) => m.name);
}
