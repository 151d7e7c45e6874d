import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks' signature (https://www.standardwebhooks.com): `v1,<base64 HMAC-SHA256 of
 * "<webhook-id>.<webhook-timestamp>.<body>">` with the key a `whsec_` secret carries (base64 after
 * the prefix). While a rotated secret still signs, the header carries one signature per secret,
 * separated by a space, and a receiver accepts the message when one of them verifies.
 */
export const SecretPrefix = 'whsec_';

/** A new signing secret: whsec_ and 32 random bytes, base64. */
export function newWebhookSecret(): string {
  return `${SecretPrefix}${randomBytes(32).toString('base64')}`;
}

export function webhookSignature(secrets: readonly string[], id: string, timestamp: number, body: string): string {
  return secrets
    .map((secret) => {
      const key = Buffer.from(secret.slice(SecretPrefix.length), 'base64');
      return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
    })
    .join(' ');
}
