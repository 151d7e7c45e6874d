import { ConfigError, loadConfig } from '../src/config.js';
import { loadMigrations, migrate } from '../src/infra/migrate.js';
import { connectPostgres } from '../src/infra/postgres.js';
import { createLogger } from '../src/logger.js';

/** npm run migrate: applies pending migrations to DATABASE_URL (the service also does this at start). */
const config = loadConfig();
if (!config.database.url) throw new ConfigError('DATABASE_URL is required (the embedded database migrates itself at start)');
const log = createLogger({ level: config.logLevel, format: config.logFormat, name: 'migrate' });
const sql = connectPostgres({ url: config.database.url, poolMax: 1, applicationName: 'checkout-platform-migrate' });
try {
  const applied = await migrate(sql, await loadMigrations(), log);
  log.info({ applied }, applied.length ? 'migrations applied' : 'schema is current');
} finally {
  await sql.end();
}
