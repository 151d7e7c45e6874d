import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

/**
 * Secrets the platform must read back (the TSE's API key, secret and admin PIN, webhook signing
 * secrets, the NATS signing seeds) are stored sealed: AES-256-GCM with SECRETS_KEY, as text that
 * names its key:
 *
 *   sealed:v1:<key id>:<nonce, base64url>:<ciphertext and tag, base64url>
 *
 * The key id is derived from the key (an HMAC of a fixed label: it tells nothing of the key), so a
 * new key can take over while the one before still opens what it sealed (SECRETS_KEY_PREVIOUS), and
 * `npm run reseal` seals everything anew under the current key. The purpose (where the value lives,
 * such as `fiscal.apiSecret`) is bound to the ciphertext as associated data: a sealed value copied
 * to another place does not open there. Passwords are not sealed: they are only checked, and stay
 * scrypt hashes.
 */
export interface KeyRing {
  /** The id of the key that seals (SECRETS_KEY's). */
  readonly currentId: string;
  /** The ids of every key that opens (SECRETS_KEY's and SECRETS_KEY_PREVIOUS's). */
  readonly ids: readonly string[];
  seal(plaintext: string, purpose: string): string;
  /** Opens a sealed value; throws UnreadableSecretError when no key of the ring sealed it or it was changed. */
  open(sealed: string, purpose: string): string;
}

/** How every sealed value starts. */
export const SealedPrefix = 'sealed:v1:';
const NonceBytes = 12;
const TagBytes = 16;

/** Whether a stored text is a sealed value (else: a plain value written before secrets were sealed). */
export function isSealed(text: string): boolean {
  return text.startsWith(SealedPrefix);
}

/** The id of the key that sealed a value. */
export function sealedKeyId(sealed: string): string {
  return sealed.slice(SealedPrefix.length).split(':')[0] ?? '';
}

export class UnreadableSecretError extends Error {
  override name = 'UnreadableSecretError';
  constructor(
    readonly keyId: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** The one line a start prints when a stored secret was sealed under a key it does not have. */
export function unknownKeyMessage(keyId: string): string {
  return `secrets are sealed under key ${keyId}, which neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS is: set SECRETS_KEY (or SECRETS_KEY_PREVIOUS, then run npm run reseal) to that key`;
}

/**
 * A key as configured: 32 bytes as base64, base64url or hex (`openssl rand -base64 32`). Anything
 * else is refused rather than stretched: a short or mistyped key must not seal anything.
 */
export function parseKey(text: string): Buffer {
  const trimmed = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Buffer.from(trimmed, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed)) return Buffer.from(trimmed, 'base64');
  throw new Error('must be 32 random bytes as base64 or hex (openssl rand -base64 32)');
}

export function keyId(key: Buffer): string {
  return createHmac('sha256', key).update('checkout-platform secrets key id').digest('hex').slice(0, 12);
}

export function createKeyRing(current: Buffer, previous: readonly Buffer[] = []): KeyRing {
  const keys = new Map<string, Buffer>();
  for (const key of [current, ...previous]) keys.set(keyId(key), key);
  const currentId = keyId(current);
  return {
    currentId,
    ids: [...keys.keys()],
    seal(plaintext, purpose) {
      const nonce = randomBytes(NonceBytes);
      const cipher = createCipheriv('aes-256-gcm', current, nonce, { authTagLength: TagBytes });
      cipher.setAAD(Buffer.from(purpose));
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
      return `${SealedPrefix}${currentId}:${nonce.toString('base64url')}:${body.toString('base64url')}`;
    },
    open(sealed, purpose) {
      if (!isSealed(sealed)) throw new UnreadableSecretError('', 'not a sealed value');
      const [id = '', nonce = '', body = ''] = sealed.slice(SealedPrefix.length).split(':');
      const key = keys.get(id);
      if (!key) throw new UnreadableSecretError(id, unknownKeyMessage(id));
      const bytes = Buffer.from(body, 'base64url');
      const nonceBytes = Buffer.from(nonce, 'base64url');
      // GCM accepts tags as short as 4 bytes unless told their length: a value cut short must not open.
      if (bytes.length < TagBytes || nonceBytes.length !== NonceBytes) throw new UnreadableSecretError(id, `a secret sealed under key ${id} for ${purpose} is cut short`);
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, nonceBytes, { authTagLength: TagBytes });
        decipher.setAAD(Buffer.from(purpose));
        decipher.setAuthTag(bytes.subarray(bytes.length - TagBytes));
        return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - TagBytes)), decipher.final()]).toString('utf8');
      } catch (err) {
        throw new UnreadableSecretError(id, `a secret sealed under key ${id} for ${purpose} does not open: it was changed or belongs elsewhere`, { cause: err });
      }
    },
  };
}

/** A secret as stored: its value (sealed, or plain from before sealing), what it is sealed for, and how to write it anew. */
export interface StoredSecret {
  value: string;
  purpose: string;
  /** Writes the value sealed anew, if the stored one is still `value` (a write in between wins); answers whether it did. */
  replace(sealed: string): Promise<boolean>;
}
