import type { Sql } from '../src/infra/postgres.js';
import type { Logger } from '../src/logger.js';
import { isSealed, sealedKeyId, UnreadableSecretError, unknownKeyMessage, type KeyRing, type StoredSecret } from '../src/secrets/key-ring.js';
import { storedClientSecrets } from './clients/secrets.js';
import { storedFiscalSecrets } from './settings/secrets.js';
import { storedWebhookSecrets } from './webhooks/secrets.js';

/**
 * The secrets the workers keep sealed in Postgres (src/secrets/key-ring.ts), wherever they live:
 * the TSE's secrets in the project settings, the webhooks' signing secrets, the apps' TOTP keys.
 */
const places = [
  { name: 'tse', stored: storedFiscalSecrets },
  { name: 'webhook', stored: storedWebhookSecrets },
  { name: 'client', stored: storedClientSecrets },
] as const;

/**
 * At a worker's start, after the migrations: every stored secret must open with the ring, or the
 * start ends with one line naming the key it lacks (it never seals anything new under a key that
 * cannot read the old); then secrets stored plain before sealing are sealed (the data migration of
 * sealing: it runs at every start, and finds nothing once done). Each place is read once.
 */
export async function prepareSecretsAtRest(sql: Sql, ring: KeyRing, log: Logger): Promise<void> {
  const stored = await Promise.all(places.map((place) => place.stored(sql)));
  const unknown = stored.flat().filter((s) => isSealed(s.value)).map((s) => sealedKeyId(s.value)).find((id) => !ring.ids.includes(id));
  if (unknown) throw new UnreadableSecretError(unknown, unknownKeyMessage(unknown));
  for (const [i, place] of places.entries()) {
    const sealed = await sealAnew(ring, stored[i]!.filter((s) => !isSealed(s.value)));
    if (sealed) log.info({ place: place.name, sealed }, 'sealed stored secrets that were plain');
  }
}

/** `npm run reseal`: every stored secret sealed anew under the ring's current key; answers how many per place. */
export async function resealStoredSecrets(sql: Sql, ring: KeyRing): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const place of places) {
    const stale = (await place.stored(sql)).filter((s) => !isSealed(s.value) || sealedKeyId(s.value) !== ring.currentId);
    counts[place.name] = await sealAnew(ring, stale);
  }
  return counts;
}

/** Seals each secret under the ring's current key (a sealed one opened first); answers how many were written. */
async function sealAnew(ring: KeyRing, secrets: readonly StoredSecret[]): Promise<number> {
  let written = 0;
  for (const secret of secrets) {
    const plain = isSealed(secret.value) ? ring.open(secret.value, secret.purpose) : secret.value;
    if (await secret.replace(ring.seal(plain, secret.purpose))) written++;
  }
  return written;
}
