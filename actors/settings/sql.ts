import type { Sql } from '../../src/infra/postgres.js';
import type { FiscalizationSettings } from '../../subjects/fiscal.js';
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

/**
 * The project's settings, or the defaults while none were written. Other actors price with this.
 * The fiscalization choice is left out: it holds secrets, and only the fiscal workers read it
 * (readFiscalization).
 */
export async function readSettings(sql: Sql, project: string): Promise<Settings> {
  const [row] = await sql<SettingsRow[]>`
    select currency, tax_rates, payment_methods, locale, company_name, tax_number, vat_id, company_address
    from project_settings where project = ${project}`;
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

/** The project's TSE choice with its secrets (for the fiscal workers only); undefined: none made. */
export async function readFiscalization(sql: Sql, project: string): Promise<FiscalizationSettings | undefined> {
  const [row] = await sql<{ fiscalization: FiscalizationSettings | null }[]>`select fiscalization from project_settings where project = ${project}`;
  return row?.fiscalization ?? undefined;
}

/**
 * Writes the settings and answers the fiscalization choice now stored. A PUT without
 * `fiscalization` keeps the stored choice (a client that does not know it cannot stop a project's
 * sales); one without a secret keeps the stored secret.
 */
export async function writeSettings(sql: Sql, project: string, settings: Settings): Promise<FiscalizationSettings | undefined> {
  const fiscalization = settings.fiscalization ? JSON.stringify(settings.fiscalization) : null;
  const [row] = await sql<{ fiscalization: FiscalizationSettings | null }[]>`
    insert into project_settings (project, currency, tax_rates, payment_methods, locale, company_name, tax_number, vat_id, company_address, fiscalization)
    values (${project}, ${settings.currency}, ${sql.json(settings.taxRates)}, ${settings.paymentMethods}, ${settings.locale},
            ${settings.companyName}, ${settings.taxNumber}, ${settings.vatID}, ${sql.json(settings.companyAdress)}, ${fiscalization}::text::jsonb)
    on conflict (project) do update
      set currency = excluded.currency, tax_rates = excluded.tax_rates, payment_methods = excluded.payment_methods,
          locale = excluded.locale, company_name = excluded.company_name, tax_number = excluded.tax_number,
          vat_id = excluded.vat_id, company_address = excluded.company_address, updated_at = now(),
          fiscalization = case
            when excluded.fiscalization is null then project_settings.fiscalization
            else coalesce(
              (select jsonb_object_agg(key, value) from jsonb_each(project_settings.fiscalization)
               where key in ('apiKey', 'apiSecret', 'adminPin')),
              '{}'::jsonb) || excluded.fiscalization
          end
    returning fiscalization`;
  return row?.fiscalization ?? undefined;
}

/** The TSE secrets as stored (sealed, or plain from before sealing), per project and field. */
export async function readFiscalSecrets(sql: Sql): Promise<Array<{ project: string; field: 'apiKey' | 'apiSecret' | 'adminPin'; value: string }>> {
  return sql<Array<{ project: string; field: 'apiKey' | 'apiSecret' | 'adminPin'; value: string }>>`
    select s.project, f.key as field, f.value
    from project_settings s, jsonb_each_text(s.fiscalization) f
    where s.fiscalization ?| array['apiKey', 'apiSecret', 'adminPin'] and f.key in ('apiKey', 'apiSecret', 'adminPin')`;
}

/** Replaces one stored TSE secret, if it is still the value read (a settings write in between wins). */
export async function replaceFiscalSecret(sql: Sql, project: string, field: string, was: string, value: string): Promise<boolean> {
  const rows = await sql`
    update project_settings set fiscalization = fiscalization || jsonb_build_object(${field}::text, ${value}::text)
    where project = ${project} and fiscalization ->> ${field} = ${was}
    returning project`;
  return rows.length > 0;
}
