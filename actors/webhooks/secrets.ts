import type { Sql } from '../../src/infra/postgres.js';
import { isSealed, sealedKeyId, type KeyRing } from '../../src/secrets/key-ring.js';

/**
 * A webhook's signing secrets are sealed with SECRETS_KEY (src/secrets/key-ring.ts), bound to their
 * integration: the current one and, for 24 h after a rotation, the one before (moved as it is).
 */
export function webhookSecretPurpose(project: string, integrationID: string): string {
  return `webhook.secret:${project}:${integrationID}`;
}

/** Every stored webhook secret (the current ones, and the ones before a rotation while they sign). */
async function storedSecrets(sql: Sql): Promise<Array<{ project: string; id: string; field: 'secret' | 'previous_secret'; value: string }>> {
  return sql<Array<{ project: string; id: string; field: 'secret' | 'previous_secret'; value: string }>>`
    select project, id, 'secret' as field, secret as value from integrations where kind = 'webhook' and secret is not null
    union all
    select project, id, 'previous_secret', previous_secret from integrations where kind = 'webhook' and previous_secret is not null`;
}

/** The ids of the keys the webhook secrets are sealed under. */
export async function webhookSecretKeyIds(sql: Sql): Promise<string[]> {
  return [...new Set((await storedSecrets(sql)).filter((s) => isSealed(s.value)).map((s) => sealedKeyId(s.value)))];
}

/** Seals the webhook secrets anew under the ring's current key (`all`), or only plain ones (none are written plain: `plain` finds nothing). */
export async function resealWebhookSecrets(sql: Sql, ring: KeyRing, which: 'plain' | 'all'): Promise<number> {
  let changed = 0;
  for (const { project, id, field, value } of await storedSecrets(sql)) {
    if (isSealed(value) && (which === 'plain' || sealedKeyId(value) === ring.currentId)) continue;
    const purpose = webhookSecretPurpose(project, id);
    const sealed = ring.seal(isSealed(value) ? ring.open(value, purpose) : value, purpose);
    const rows = field === 'secret'
      ? await sql`update integrations set secret = ${sealed} where project = ${project} and id = ${id} and secret = ${value} returning id`
      : await sql`update integrations set previous_secret = ${sealed} where project = ${project} and id = ${id} and previous_secret = ${value} returning id`;
    changed += rows.length;
  }
  return changed;
}
