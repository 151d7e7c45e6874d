import type { Sql } from '../../src/infra/postgres.js';
import { DefaultSettings, type Settings } from '../../subjects/settings.js';

interface SettingsRow {
  currency: string;
  tax_rates: Record<string, string>;
  payment_methods: string[];
}

/** The project's settings, or the defaults while none were written. Other actors price with this. */
export async function readSettings(sql: Sql, project: string): Promise<Settings> {
  const [row] = await sql<SettingsRow[]>`
    select currency, tax_rates, payment_methods from project_settings where project = ${project}`;
  return row ? { currency: row.currency, taxRates: row.tax_rates, paymentMethods: row.payment_methods } : DefaultSettings;
}

export async function writeSettings(sql: Sql, project: string, settings: Settings): Promise<void> {
  await sql`
    insert into project_settings (project, currency, tax_rates, payment_methods)
    values (${project}, ${settings.currency}, ${sql.json(settings.taxRates)}, ${settings.paymentMethods})
    on conflict (project) do update
      set currency = excluded.currency, tax_rates = excluded.tax_rates,
          payment_methods = excluded.payment_methods, updated_at = now()`;
}
