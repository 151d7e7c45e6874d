import { createHmac, randomUUID } from 'node:crypto';

/**
 * The public Android app SDK's sign-in as it performs it (snabble/Android-SDK, read, not copied:
 * `Snabble.setup` and `readMetadata`, `Project.parse`, `auth/TokenRegistry`, `auth/Totp`,
 * `auth/Base32String`, `auth/SnabbleAuthorizationInterceptor`), for tests that sign in the way an
 * app does:
 *
 * - the metadata from `/metadata/app/{appId}/android/{version}`; `createAppUser` + `?project=<id>`
 *   and each project's `tokens` + `?role=retailerApp`, made absolute with the base URL;
 * - without an app user: `POST` to the app user URL with an empty body and `Authorization: Basic
 *   base64(appId:totp)`; with one: `GET` the tokens URL with `base64(appId:totp:appUserId:secret)`;
 *   both with `Client-ID`;
 * - an answer that is not 2xx: the clock is set from its `Date` header and the request made once
 *   more; a 2xx sets the clock from `Date` too;
 * - a token is asked for again once half its life is over;
 * - calls of the API carry `Authorization: Bearer`, `Client-Token` and `Client-ID`.
 *
 * The TOTP here is written apart from the platform's (src/auth/totp.ts), as the SDK's is: the key
 * decoded as Google's Base32String decodes it, an HMAC over the big-endian step, dynamic
 * truncation. test/totp.test.ts checks it against the SDK's published vectors.
 */
export interface SdkToken {
  id: string;
  token: string;
  issuedAt: number;
  expiresAt: number;
}

export interface SdkAttempt {
  method: string;
  url: string;
  status: number;
  date: string | null;
}

export interface AppSdk {
  readonly clientId: string;
  metadata: any;
  project: any;
  appUser?: { id: string; secret: string };
  /** Every sign-in request made, in order. */
  readonly attempts: SdkAttempt[];
  /** TokenRegistry.getToken: the token, asking for one when there is none or half its life is over; null when refused. */
  token(): Promise<SdkToken | null>;
  /** A call of the API as the SDK's OkHttp interceptor makes it. */
  call(method: string, url: string, body?: unknown): Promise<{ status: number; body: any; headers: Headers }>;
  /** A link of the metadata (global or the project's), made absolute. */
  link(name: string): string;
}

export interface AppSdkOptions {
  /** How far the phone's clock is off (ms). */
  clockSkewMs?: number;
  version?: string;
  clientId?: string;
}

export async function startAppSdk(baseUrl: string, appId: string, secret: string, options: AppSdkOptions = {}): Promise<AppSdk> {
  const clientId = options.clientId ?? randomUUID().replace(/-/g, '');
  const skew = options.clockSkewMs ?? 0;
  const key = sdkBase32Decode(secret);
  const absolute = (href: string) => (href.startsWith('http') ? href : baseUrl + href);
  let timeOffset = 0;
  let current: SdkToken | undefined;
  const attempts: SdkAttempt[] = [];

  const metadataResponse = await fetch(absolute(`/metadata/app/${appId}/android/${options.version ?? '1.0'}`));
  if (metadataResponse.status !== 200) throw new Error(`metadata: ${metadataResponse.status} ${await metadataResponse.text()}`);
  const metadata: any = await metadataResponse.json();
  const project = metadata.projects[0];
  const urls: Record<string, string> = Object.fromEntries(Object.entries(project.links as Record<string, { href: string }>).map(([name, link]) => [name, absolute(link.href)]));
  const tokensUrl = `${urls.tokens}?role=retailerApp`;
  const appUserUrl = `${absolute(metadata.links.createAppUser.href)}?project=${project.id}`;

  const offsetSeconds = () => Math.floor((Date.now() + skew + timeOffset) / 1000);
  const adjust = (response: Response) => {
    const date = response.headers.get('date');
    if (date) timeOffset = Date.parse(date) - (Date.now() + skew);
  };

  const sdk: AppSdk = {
    clientId,
    metadata,
    project,
    attempts,
    link: (name) => urls[name] ?? absolute(metadata.links[name].href),
    async token() {
      if (current && offsetSeconds() < current.issuedAt + (current.expiresAt - current.issuedAt) / 2) return current;
      return (await refresh(false)) ?? current ?? null;
    },
    async call(method, url, body) {
      const token = await sdk.token();
      const headers: Record<string, string> = { 'Client-ID': clientId };
      if (token) Object.assign(headers, { Authorization: `Bearer ${token.token}`, 'Client-Token': token.token });
      if (body !== undefined) headers['Content-Type'] = 'application/json';
      const response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await response.text();
      return { status: response.status, headers: response.headers, body: text && (response.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text };
    },
  };

  async function refresh(isRetry: boolean): Promise<SdkToken | null> {
    const code = sdkTotp(key, offsetSeconds());
    const user = sdk.appUser;
    const auth = user ? `${appId}:${code}:${user.id}:${user.secret}` : `${appId}:${code}`;
    const method = user ? 'GET' : 'POST';
    const url = user ? tokensUrl : appUserUrl;
    const response = await fetch(url, {
      method,
      headers: { Authorization: `Basic ${Buffer.from(auth, 'utf8').toString('base64')}`, 'Client-ID': clientId },
      // OkHttp's RequestBody.create(null, ""): an empty body without a content type.
      ...(user ? {} : { body: new Uint8Array(0) }),
    });
    const text = await response.text();
    attempts.push({ method, url, status: response.status, date: response.headers.get('date') });
    if (response.ok) {
      adjust(response);
      const body = JSON.parse(text);
      if (!user) sdk.appUser = body.appUser;
      current = user ? body : body.token;
      return current!;
    }
    if (isRetry) return null;
    adjust(response);
    return refresh(true);
  }

  return sdk;
}

/** Google's Base32String.decode as the SDK uses it: case, spaces, dashes and padding forgiven; an incomplete last chunk dropped. */
export function sdkBase32Decode(encoded: string): Buffer {
  const clean = encoded.trim().replace(/-/g, '').replace(/ /g, '').replace(/=*$/, '').toUpperCase();
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  const out = Buffer.alloc(Math.floor((clean.length * 5) / 8));
  let buffer = 0;
  let bitsLeft = 0;
  let next = 0;
  for (const c of clean) {
    const value = alphabet.indexOf(c);
    if (value < 0) throw new Error(`Illegal character: ${c}`);
    buffer = ((buffer << 5) | value) & 0xffff;
    bitsLeft += 5;
    if (bitsLeft >= 8) {
      out[next++] = (buffer >> (bitsLeft - 8)) & 0xff;
      bitsLeft -= 8;
    }
  }
  return out;
}

/** Totp.generate(seconds) of the SDK: HmacSHA256, 8 digits, 30-second steps. */
export function sdkTotp(key: Buffer, seconds: number): string {
  const counter = Buffer.alloc(8);
  counter.writeBigInt64BE(BigInt(Math.floor(seconds / 30)));
  const hash = createHmac('sha256', key).update(counter).digest();
  const offset = hash[hash.length - 1]! & 0xf;
  const pin = (hash.readInt32BE(offset) & 0x7fffffff) % 100_000_000;
  return String(pin).padStart(8, '0');
}
