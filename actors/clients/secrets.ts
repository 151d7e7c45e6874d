import { createHash, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto';
import { base32Decode, base32Encode, newTotpKey, totpKey } from '../../src/auth/totp.js';
import type { Sql } from '../../src/infra/postgres.js';
import type { KeyRing, StoredSecret } from '../../src/secrets/key-ring.js';
import * as db from './sql.js';

/**
 * The secrets of clients and app users, and how each is kept:
 *
 * - an app's TOTP key must be read back to check a code: sealed with SECRETS_KEY
 *   (src/secrets/key-ring.ts), bound to its client, and `npm run reseal` seals it anew;
 * - a service client's secret and an app user's secret are only checked: kept as their SHA-256.
 *   Each is 256 random bits made here, not a person's password: nobody can try a dictionary
 *   against its hash, so salt and a slow hash (scrypt, as portal passwords have) would protect
 *   nothing and cost every token request milliseconds of CPU. A copy of the table gives away no
 *   secret; a compare takes the same time whatever the guess.
 */
export function appKeyPurpose(project: string, clientID: string): string {
  return `client.totp:${project}:${clientID}`;
}

/** A new app key: the bytes, and the Base32 text shown once (and sealed). */
export function newAppKey(): { bytes: Buffer; text: string } {
  const bytes = newTotpKey();
  return { bytes, text: base32Encode(bytes) };
}

/** 256 random bits as base64url: no `:` (the SDKs' Basic credentials), nothing to escape in a form. */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

export function secretHash(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}

/** A service client's secret as stored: `sha256:<base64url>`. */
export function storedServiceSecret(secret: string): string {
  return `sha256:${secretHash(secret).toString('base64url')}`;
}

export function matchesHash(secret: string, hash: Buffer): boolean {
  const given = secretHash(secret);
  return hash.length === given.length && timingSafeEqual(hash, given);
}

export function matchesStoredServiceSecret(secret: string, stored: string): boolean {
  return stored.startsWith('sha256:') && matchesHash(secret, Buffer.from(stored.slice(7), 'base64url'));
}

/**
 * Opened app keys by their sealed text, so that a token request costs no AES: a sealed text names
 * one key of one client, and a rotation or deletion stops it being read from the table. Bounded:
 * the oldest entry goes first.
 */
export class OpenedAppKeys {
  private readonly keys = new Map<string, KeyObject>();

  constructor(
    private readonly ring: KeyRing,
    private readonly limit = 10_000,
  ) {}

  get(sealed: string, purpose: string): KeyObject {
    let key = this.keys.get(sealed);
    if (!key) {
      key = totpKey(base32Decode(this.ring.open(sealed, purpose)));
      if (this.keys.size >= this.limit) this.keys.delete(this.keys.keys().next().value as string);
      this.keys.set(sealed, key);
    }
    return key;
  }
}

/**
 * Every sealed app key (current, and the one before a rotation), as the workers' start and
 * `npm run reseal` seal it anew (actors/secrets-at-rest.ts).
 */
export async function storedClientSecrets(sql: Sql): Promise<StoredSecret[]> {
  return (await db.sealedAppKeys(sql)).map(({ project, id, field, value }) => ({
    value,
    purpose: appKeyPurpose(project, id),
    replace: (sealed) => db.replaceSealedAppKey(sql, { project, id, field, was: value, value: sealed }),
  }));
}
