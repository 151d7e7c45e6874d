import fc from 'fast-check';
import * as OTPAuth from 'otpauth';
import t from 'tap';
import { base32Decode, base32Encode, totpCode, totpKey, totpMatches, totpStep } from '../src/auth/totp.js';
import { sdkBase32Decode, sdkTotp } from './support/app-sdk.js';

/**
 * The TOTP codes apps sign in with (src/auth/totp.ts) against the public Android SDK's own test
 * (snabble/Android-SDK core/src/test/java/io/snabble/sdk/TotpTest.java: its Base32 key, HmacSHA256,
 * 8 digits, 30 s, and the codes it expects, which are RFC 6238's SHA-256 vectors), the SDK's way
 * of making them as test/support/app-sdk.ts writes it down, and the `otpauth` library.
 */
const SdkTestKey = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQGEZA====';
const SdkVectors: Array<[number, string]> = [
  [59, '46119246'],
  [1_111_111_109, '68084774'],
  [1_111_111_111, '67062674'],
  [1_234_567_890, '91819424'],
  [2_000_000_000, '90698825'],
  [20_000_000_000, '77737706'],
];

t.test("the platform makes the codes of the Android SDK's published test vectors", async (t) => {
  const key = totpKey(base32Decode(SdkTestKey));
  t.same(base32Decode(SdkTestKey).toString(), '12345678901234567890123456789012', 'the key decodes to the bytes of RFC 6238 Appendix B');
  for (const [seconds, code] of SdkVectors) {
    t.equal(totpCode(key, totpStep(seconds * 1000)), code, `at ${seconds} s`);
    t.ok(totpMatches(key, code, seconds * 1000), `and accepts it at ${seconds} s`);
  }
});

t.test('the test suite makes them as the SDK does', async (t) => {
  const key = sdkBase32Decode(SdkTestKey);
  for (const [seconds, code] of SdkVectors) t.equal(sdkTotp(key, seconds), code, `at ${seconds} s`);
});

t.test('a code of the step before or after is accepted, one two steps away or malformed is not', async (t) => {
  const key = totpKey(base32Decode(SdkTestKey));
  const now = 1_234_567_890_000;
  const at = (offsetSteps: number) => totpCode(key, totpStep(now) + offsetSteps);
  t.ok(totpMatches(key, at(-1), now), 'the step before');
  t.ok(totpMatches(key, at(1), now), 'the step after');
  t.notOk(totpMatches(key, at(-2), now), 'two steps before');
  t.notOk(totpMatches(key, at(2), now), 'two steps after');
  for (const bad of ['', '9181942', '918194240', '9181942a', ' 91819424', '+1819424']) t.notOk(totpMatches(key, bad, now), `not ${JSON.stringify(bad)}`);
});

t.test('the platform, the SDK and the otpauth library make the same code for any key and time', async () => {
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 10, maxLength: 64 }), fc.integer({ min: 0, max: 2 ** 40 }), (bytes, seconds) => {
      const text = base32Encode(bytes);
      const ours = totpCode(totpKey(base32Decode(text)), totpStep(seconds * 1000));
      const library = new OTPAuth.TOTP({ algorithm: 'SHA256', digits: 8, period: 30, secret: OTPAuth.Secret.fromBase32(text.replace(/=/g, '')) }).generate({ timestamp: seconds * 1000 });
      const sdk = sdkTotp(sdkBase32Decode(text), seconds);
      return ours === library && ours === sdk;
    }),
    { numRuns: 500 },
  );
});

t.test('Base32 round-trips every key and reads it as the SDK does', async () => {
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 0, maxLength: 64 }), (bytes) => {
      const text = base32Encode(bytes);
      return text.length % 8 === 0 && Buffer.from(bytes).equals(base32Decode(text)) && Buffer.from(bytes).equals(sdkBase32Decode(text)) && Buffer.from(bytes).equals(base32Decode(text.toLowerCase().replace(/=/g, '')));
    }),
  );
});
