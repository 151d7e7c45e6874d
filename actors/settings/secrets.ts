import type { Sql } from '../../src/infra/postgres.js';
import { isSealed, type KeyRing, type StoredSecret } from '../../src/secrets/key-ring.js';
import { readFiscalSecrets, replaceFiscalSecret } from './sql.js';
import { FiscalSecrets, type FiscalizationSettings } from '../../subjects/fiscal.js';

/**
 * The TSE's write-only fields (API key, API secret, admin PIN) are stored sealed with SECRETS_KEY
 * (src/secrets/key-ring.ts), bound to their project and field: a sealed value copied to another
 * project's settings does not open there. Only the fiscal workers open them, when they make a
 * project's fiskaly provider.
 */
const purpose = (project: string, field: string) => `fiscal.${field}:${project}`;

/**
 * The secrets of a choice from the API sealed. What the API takes is always the secret itself: a
 * value that looks sealed is sealed like any other text (taken as sealed, a made-up one would name
 * a key no worker has, and stop every worker's start).
 */
export function sealFiscalSecrets(project: string, settings: FiscalizationSettings, ring: KeyRing): FiscalizationSettings {
  const sealed = { ...settings };
  for (const field of FiscalSecrets) {
    const value = settings[field];
    if (value !== undefined) sealed[field] = ring.seal(value, purpose(project, field));
  }
  return sealed;
}

/** The settings with their secrets opened (a value stored before sealing is taken as it is). */
export function openFiscalSecrets(project: string, settings: FiscalizationSettings, ring: KeyRing): FiscalizationSettings {
  const opened = { ...settings };
  for (const field of FiscalSecrets) {
    const value = settings[field];
    if (value !== undefined && isSealed(value)) opened[field] = ring.open(value, purpose(project, field));
  }
  return opened;
}

/** Every stored TSE secret, as the workers' start and `npm run reseal` seal it anew (actors/secrets-at-rest.ts). */
export async function storedFiscalSecrets(sql: Sql): Promise<StoredSecret[]> {
  return (await readFiscalSecrets(sql)).map(({ project, field, value }) => ({
    value,
    purpose: purpose(project, field),
    replace: (sealed) => replaceFiscalSecret(sql, project, field, value, sealed),
  }));
}
