import type { Sql } from '../src/infra/postgres.js';
import type { Logger } from '../src/logger.js';
import { UnreadableSecretError, unknownKeyMessage, type KeyRing } from '../src/secrets/key-ring.js';
import { fiscalSecretKeyIds, resealFiscalSecrets } from './settings/secrets.js';
import { resealWebhookSecrets, webhookSecretKeyIds } from './webhooks/secrets.js';

/**
 * The secrets the workers keep sealed in Postgres (src/secrets/key-ring.ts), wherever they live:
 * the TSE's secrets in the project settings, the webhooks' signing secrets.
 */
const places = [
  { name: 'tse', keyIds: fiscalSecretKeyIds, reseal: resealFiscalSecrets },
  { name: 'webhook', keyIds: webhookSecretKeyIds, reseal: resealWebhookSecrets },
] as const;

/**
 * At a worker's start, after the migrations: every stored secret must open with the ring, or the
 * start ends with one line naming the key it lacks (it never seals anything new under a key that
 * cannot read the old); then secrets stored plain before sealing are sealed (the data migration of
 * sealing: it runs at every start, and finds nothing once done).
 */
export async function prepareSecretsAtRest(sql: Sql, ring: KeyRing, log: Logger): Promise<void> {
  for (const place of places) {
    const unknown = (await place.keyIds(sql)).find((id) => !ring.ids.includes(id));
    if (unknown) throw new UnreadableSecretError(unknown, unknownKeyMessage(unknown));
  }
  for (const place of places) {
    const sealed = await place.reseal(sql, ring, 'plain');
    if (sealed) log.info({ place: place.name, sealed }, 'sealed stored secrets that were plain');
  }
}

/** `npm run reseal`: every stored secret sealed anew under the ring's current key; answers how many per place. */
export async function resealStoredSecrets(sql: Sql, ring: KeyRing): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const place of places) counts[place.name] = await place.reseal(sql, ring, 'all');
  return counts;
}
