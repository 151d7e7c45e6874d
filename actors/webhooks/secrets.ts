import type { Sql } from '../../src/infra/postgres.js';
import type { StoredSecret } from '../../src/secrets/key-ring.js';

/**
 * A webhook's signing secrets are sealed with SECRETS_KEY (src/secrets/key-ring.ts), bound to their
 * integration: the current one and, for 24 h after a rotation, the one before (moved as it is).
 */
export function webhookSecretPurpose(project: string, integrationID: string): string {
  return `webhook.secret:${project}:${integrationID}`;
}

/**
 * Every stored webhook secret (the current ones, and the ones before a rotation while they sign), as
 * the workers' start and `npm run reseal` seal it anew (actors/secrets-at-rest.ts). None is ever
 * written plain.
 */
export async function storedWebhookSecrets(sql: Sql): Promise<StoredSecret[]> {
  const rows = await sql<Array<{ project: string; id: string; field: 'secret' | 'previous_secret'; value: string }>>`
    select project, id, 'secret' as field, secret as value from integrations where kind = 'webhook' and secret is not null
    union all
    select project, id, 'previous_secret', previous_secret from integrations where kind = 'webhook' and previous_secret is not null`;
  return rows.map(({ project, id, field, value }) => ({
    value,
    purpose: webhookSecretPurpose(project, id),
    async replace(sealed) {
      const changed = field === 'secret'
        ? await sql`update integrations set secret = ${sealed} where project = ${project} and id = ${id} and secret = ${value} returning id`
        : await sql`update integrations set previous_secret = ${sealed} where project = ${project} and id = ${id} and previous_secret = ${value} returning id`;
      return changed.length > 0;
    },
  }));
}
