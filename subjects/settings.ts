import { z } from 'zod';
import { ProjectId } from './common.js';
import { endpoint } from './contract.js';

export const TaxRate = z
  .string()
  .regex(/^(?:0|[1-9]\d?)(?:\.\d{1,4})?$/, 'a tax rate in percent as decimal text, such as "19" or "5.5"');

export const PaymentMethodId = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'a payment method id is 1-64 letters, digits, "-" or "_"');

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
  })
  .meta({ id: 'Settings' });
export type Settings = z.infer<typeof Settings>;

export const ProjectSettings = Settings.extend({ project: ProjectId }).meta({ id: 'ProjectSettings' });
export type ProjectSettings = z.infer<typeof ProjectSettings>;

/** What a project has until its settings are first written. */
export const DefaultSettings: Settings = {
  currency: 'EUR',
  taxRates: { normal: '19', reduced: '7' },
  paymentMethods: ['cash'],
};

export const settings = {
  get: endpoint('svc.settings.get', z.object({ project: ProjectId }), ProjectSettings),
  put: endpoint('svc.settings.put', z.object({ project: ProjectId, settings: Settings }), ProjectSettings),
};
