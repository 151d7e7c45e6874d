import { createHash } from 'node:crypto';

/**
 * A name-based id in the layout of a version 4 UUID: 122 bits of SHA-256 of the name, so the same
 * name gives the same id, ids of different names never meet, and the id tells nothing of the name.
 * For ids that a retry must find again (a TSE transaction of a process, a process created with an
 * Idempotency-Key) where the receiving side asks for UUIDv4 ids and may check the version digit.
 */
export function derivedUuid(name: string): string {
  const h = createHash('sha256').update(name).digest();
  h[6] = (h[6]! & 0x0f) | 0x40;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const hex = h.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
