import type { Sql } from '../../src/infra/postgres.js';
import { isSealed, sealedKeyId, type KeyRing } from '../../src/secrets/key-ring.js';
import { replaceFiscalSecret, storedFiscalSecrets } from './sql.js';
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

/** Seals a value anew under the ring's current key (npm run reseal; a plain one from before sealing too). */
export function resealFiscalSecret(project: string, field: (typeof FiscalSecrets)[number], value: string, ring: KeyRing): string {
  const plain = isSealed(value) ? ring.open(value, purpose(project, field)) : value;
  return ring.seal(plain, purpose(project, field));
}

/**
 * Every stored TSE secret that is plain (written before secrets were sealed) or, with `all`, sealed
 * under another key than the current one, sealed anew under the current key. Answers how many. At
 * start the workers seal the plain ones (the data migration of sealing); `npm run reseal` all.
 */
export async function resealFiscalSecrets(sql: Sql, ring: KeyRing, which: 'plain' | 'all'): Promise<number> {
  let changed = 0;
  for (const { project, field, value } of await storedFiscalSecrets(sql)) {
    if (isSealed(value) && (which === 'plain' || sealedKeyId(value) === ring.currentId)) continue;
    if (await replaceFiscalSecret(sql, project, field, value, resealFiscalSecret(project, field, value, ring))) changed++;
  }
  return changed;
}

/** The ids of the keys the stored TSE secrets are sealed under. */
export async function fiscalSecretKeyIds(sql: Sql): Promise<string[]> {
  const values = await storedFiscalSecrets(sql);
  return [...new Set(values.filter((v) => isSealed(v.value)).map((v) => sealedKeyId(v.value)))];
}
