import { createHmac, randomBytes, scrypt as scryptCallback, timingSafeEqual } from 'node:crypto';

/**
 * Passwords stored as scrypt hashes `scrypt$N$r$p$salt$hash`, compared in constant time. The cost is
 * written into each hash, so a hash made at an older cost is still verified (and can be made anew at
 * the current one: needsRehash).
 *
 * Two costs. Secrets the platform generates (a PoS credential's password: 256 random bits) are
 * hashed at N = 2^14: no guess has a chance against them, and a PoS checks its password on many
 * calls. People's passwords (a portal account's one-time password too, so that every portal sign-in
 * costs the same: actors/portal-accounts/handler.ts) are hashed at OWASP's current
 * cost (Password Storage Cheat Sheet: N = 2^17, r = 8, p = 1): about 128 MiB and 0.3 s of one thread
 * per hash, on libuv's pool of four (so at most four run at once, 512 MiB).
 */
export interface ScryptCost {
  N: number;
  r: number;
  p: number;
}

export const GeneratedSecretCost: ScryptCost = { N: 16_384, r: 8, p: 1 };
export const PersonPasswordCost: ScryptCost = { N: 131_072, r: 8, p: 1 };
const KeyLength = 32;

/** The largest cost a stored hash may name (a hash written by hand into the database must not take a gigabyte). */
const MaxCost: ScryptCost = { N: 1_048_576, r: 16, p: 4 };

function scrypt(password: string, salt: Buffer, cost: ScryptCost): Promise<Buffer> {
  // scrypt needs 128 * N * r bytes; Node's default bound (32 MiB) refuses N = 2^17.
  const maxmem = 2 * 128 * cost.N * cost.r * cost.p;
  return new Promise((resolve, reject) => {
    scryptCallback(password, salt, KeyLength, { ...cost, maxmem }, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

export function newPassword(): string {
  return randomBytes(32).toString('base64url');
}

export async function hashPassword(password: string, cost: ScryptCost = GeneratedSecretCost): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, cost);
  return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

function costOf(stored: string): ScryptCost | undefined {
  const [scheme, n, r, p] = stored.split('$');
  const cost = { N: Number(n), r: Number(r), p: Number(p) };
  if (scheme !== 'scrypt' || !Object.values(cost).every((v) => Number.isSafeInteger(v) && v >= 1)) return undefined;
  if (cost.N > MaxCost.N || cost.r > MaxCost.r || cost.p > MaxCost.p) return undefined;
  return cost;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [, , , , salt, hash] = stored.split('$');
  const cost = costOf(stored);
  if (!cost || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await scrypt(password, Buffer.from(salt, 'base64url'), cost);
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** Whether a stored hash was made at less than `cost` (it is made anew at the next sign-in that verifies it). */
export function needsRehash(stored: string, cost: ScryptCost): boolean {
  const own = costOf(stored);
  return !own || own.N < cost.N || own.r < cost.r || own.p < cost.p;
}

/**
 * Remembers which passwords this process verified, so that a PoS's every call does not cost a
 * scrypt (tens of milliseconds of CPU). An entry holds the stored hash it was verified against and
 * an HMAC of the password under a key of this process only; it counts only while the credential
 * still has that hash, which the caller reads from the database on every call, so a revoked
 * credential is refused at once.
 */
export class VerifiedPasswords {
  private readonly key = randomBytes(32);
  private readonly entries = new Map<string, { storedHash: string; digest: Buffer }>();

  constructor(private readonly limit = 10_000) {}

  private digest(password: string): Buffer {
    return createHmac('sha256', this.key).update(password).digest();
  }

  knows(id: string, password: string, storedHash: string): boolean {
    const entry = this.entries.get(id);
    return entry !== undefined && entry.storedHash === storedHash && timingSafeEqual(entry.digest, this.digest(password));
  }

  remember(id: string, password: string, storedHash: string): void {
    if (this.entries.size >= this.limit) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(id, { storedHash, digest: this.digest(password) });
  }
}
