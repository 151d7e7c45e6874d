import { randomBytes } from 'node:crypto';
import t from 'tap';
import { createKeyRing, UnreadableSecretError } from '../src/secrets/key-ring.js';

/**
 * The key ring secrets are sealed with (src/secrets/key-ring.ts): AES-256-GCM with 16-byte tags.
 * GCM itself accepts tags down to 4 bytes unless the cipher is told their length, so a sealed value
 * cut short must be refused, not opened with a tag a forger needs only 2^32 tries to guess.
 */
const purpose = 'test.purpose';
const ring = createKeyRing(randomBytes(32));

/** The sealed text with its body (ciphertext and tag) cut to `bytes` bytes. */
function cut(sealed: string, bytes: number): string {
  const parts = sealed.split(':');
  parts[4] = Buffer.from(parts[4]!, 'base64url').subarray(0, bytes).toString('base64url');
  return parts.join(':');
}

t.test('a sealed value opens with its purpose, and not with another', async (t) => {
  const sealed = ring.seal('the secret', purpose);
  t.equal(ring.open(sealed, purpose), 'the secret');
  t.throws(() => ring.open(sealed, 'another.purpose'), UnreadableSecretError);
});

t.test('a value whose tag is cut to 4, 8, 12 or 15 bytes is refused, even where those bytes are the true tag\'s first ones', async (t) => {
  // An empty secret's body is its tag alone: cut, it is the true tag's prefix over no ciphertext.
  const sealed = ring.seal('', purpose);
  t.equal(ring.open(sealed, purpose), '', 'the whole value opens');
  for (const bytes of [4, 8, 12, 15]) t.throws(() => ring.open(cut(sealed, bytes), purpose), UnreadableSecretError, `a ${bytes}-byte tag is refused`);
});

t.test('a value with a nonce of another length is refused', async (t) => {
  const parts = ring.seal('the secret', purpose).split(':');
  parts[3] = randomBytes(16).toString('base64url');
  t.throws(() => ring.open(parts.join(':'), purpose), UnreadableSecretError);
});

t.test('the key before still opens what it sealed', async (t) => {
  const old = randomBytes(32);
  const sealed = createKeyRing(old).seal('older', purpose);
  t.equal(createKeyRing(randomBytes(32), [old]).open(sealed, purpose), 'older');
  t.throws(() => createKeyRing(randomBytes(32)).open(sealed, purpose), UnreadableSecretError, 'a ring without it cannot');
});
