import type { Sql } from '../../src/infra/postgres.js';
import { DefaultSettings, type CompanyAddress, type Settings } from '../../subjects/settings.js';

interface SettingsRow {
  currency: string;
  tax_rates: Record<string, string>;
  payment_methods: string[];
  locale: string;
  company_name: string;
  tax_number: string;
  vat_id: string;
  company_address: CompanyAddress;
}

/** The project's settings, or the defaults while none were written. Other actors price with this. */
export async function readSettings(sql: Sql, project: string): Promise<Settings> {
  const [row] = await sql<SettingsRow[]>`select * from project_settings where project = ${project}`;
  if (!row) return DefaultSettings;
  return {
    currency: row.currency,
    taxRates: row.tax_rates,
    paymentMethods: row.payment_methods,
    locale: row.locale,
    companyName: row.company_name,
    taxNumber: row.tax_number,
    vatID: row.vat_id,
    companyAdress: row.company_address,
  };
}

export async function writeSettings(sql: Sql, project: string, settings: Settings): Promise<void> {
  await sql`
    insert into project_settings (project, currency, tax_rates, payment_methods, locale, company_name, tax_number, vat_id, company_address)
    values (${project}, ${settings.currency}, ${sql.json(settings.taxRates)}, ${settings.paymentMethods}, ${settings.locale},
            ${settings.companyName}, ${settings.taxNumber}, ${settings.vatID}, ${sql.json(settings.companyAdress)})
    on conflict (project) do update
      set currency = excluded.currency, tax_rates = excluded.tax_rates, payment_methods = excluded.payment_methods,
          locale = excluded.locale, company_name = excluded.company_name, tax_number = excluded.tax_number,
          vat_id = excluded.vat_id, company_address = excluded.company_address, updated_at = now()`;
}
