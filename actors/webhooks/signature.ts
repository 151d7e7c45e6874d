import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';

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

/** The HMAC key a `whsec_` secret carries, made once per secret (a raw key is prepared anew on every use). */
export function webhookSigningKey(secret: string): KeyObject {
  return createSecretKey(Buffer.from(secret.slice(SecretPrefix.length), 'base64'));
}

export function webhookSignature(keys: readonly KeyObject[], id: string, timestamp: number, body: string): string {
  return keys.map((key) => `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64')}`).join(' ');
}
