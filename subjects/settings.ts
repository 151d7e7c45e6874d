import { z } from 'zod';
import { ProjectId } from './common.js';
import { endpoint } from './contract.js';
import { FiscalizationSettings, FiscalizationView } from './fiscal.js';

export const TaxRate = z
  .string()
  .regex(/^(?:0|[1-9]\d?)(?:\.\d{1,4})?$/, 'a tax rate in percent as decimal text, such as "19" or "5.5"');

export const PaymentMethodId = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'a payment method id is 1-64 letters, digits, "-" or "_"');

const Text = (max: number) => z.string().max(max);

/** The company's address as closings and receipts print it (the spec spells the field `companyAdress`). */
export const CompanyAddress = z
  .object({ street: Text(200).default(''), zip: Text(20).default(''), city: Text(200).default(''), country: Text(100).default('') })
  .meta({ id: 'CompanyAddress' });
export type CompanyAddress = z.infer<typeof CompanyAddress>;

/** A BCP 47 language tag Intl knows, such as de-DE: receipts format amounts and dates with it. */
export const Locale = z.string().min(2).max(35).refine((tag) => {
  try {
    return Intl.getCanonicalLocales(tag).length === 1;
  } catch {
    return false;
  }
}, 'a BCP 47 language tag such as de-DE');

export const Settings = z
  .object({
    currency: z.string().regex(/^[A-Z]{3}$/, 'an ISO 4217 currency code such as EUR'),
    taxRates: z
      .record(z.string().min(1).max(64), TaxRate)
      .refine((rates) => Object.keys(rates).length > 0, 'at least one tax category is needed')
      .describe('Tax rate in percent per tax category of the products'),
    paymentMethods: z
      .array(PaymentMethodId)
      .max(50)
      .refine((methods) => new Set(methods).size === methods.length, 'payment methods must not repeat')
      .describe('Payment methods offered at checkout'),
    locale: Locale.default('de-DE').describe('Language and region of receipts and texts (default de-DE); its language is the default of translated texts'),
    companyName: Text(200).default('').describe('The company on closings and receipts'),
    taxNumber: Text(50).default('').describe('Steuernummer, on closings and receipts'),
    vatID: Text(50).default('').describe('VAT id (USt-IdNr.), on closings and receipts'),
    companyAdress: CompanyAddress.default({ street: '', zip: '', city: '', country: '' }).describe('Spelled as the spec spells it'),
    fiscalization: FiscalizationSettings.optional().describe(
      'How sales are signed (KassenSichV TSE). Absent in a PUT: the stored choice stays. Key, secret and admin PIN are write-only: a PUT without them keeps the stored ones',
    ),
  })
  .meta({ id: 'Settings' });
export type Settings = z.infer<typeof Settings>;

export const ProjectSettings = Settings.extend({
  project: ProjectId,
  fiscalization: FiscalizationView.optional().describe('The stored choice (absent: none made; outside production the local signer signs), without its secrets'),
}).meta({ id: 'ProjectSettings' });
export type ProjectSettings = z.infer<typeof ProjectSettings>;

/** What a project has until its settings are first written. */
export const DefaultSettings: Settings = Settings.parse({
  currency: 'EUR',
  taxRates: { normal: '19', reduced: '7' },
  paymentMethods: ['cash'],
});

/** The language of a locale: the default language of translated texts (de for de-DE). */
export function languageOf(settings: Pick<Settings, 'locale'>): string {
  return new Intl.Locale(settings.locale).language;
}

export const settings = {
  get: endpoint('svc.settings.get', z.object({ project: ProjectId }), ProjectSettings, { repeatable: true }),
  put: endpoint('svc.settings.put', z.object({ project: ProjectId, settings: Settings }), ProjectSettings, { repeatable: true }),
};
