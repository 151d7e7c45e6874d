import fc from 'fast-check';
import t, { type Test } from 'tap';
import { z } from 'zod';
import { findCheckoutCoupons } from '../actors/coupons/sql.js';
import { acceptedLanguages, pickTranslation } from '../src/domain/coupons/translations.js';
import { CouponEvent } from '../subjects/coupons.js';
import { watchEvents } from './support/checkout.js';
import { png } from './support/coupon-images.js';
import { startTestService, TestProject } from './support/service.js';

/** Coupons over HTTP: every operation, validation rule and permission; codes; languages; events. */
const svc = await startTestService(t);
const p = `/${TestProject}`;
const reader = await svc.token(['couponsRead']);
const writer = await svc.token(['couponsWrite']);
const both = await svc.token(['couponsRead', 'couponsWrite']);
const events = await watchEvents(t, svc, 'stream');

/**
 * What the public app SDKs require of each coupon in a list (one coupon they cannot decode fails
 * the whole list), the union of both:
 * - iOS, snabble/snabble-ios-sdk `Snabble/Core/Coupons/Coupon.swift` (and earlier versions of it):
 *   id, name, type, projectID are non-optional; `codes: [Code]?` of {code, template}; `colors:
 *   Colors?` needs background and foreground; `image: Image?` needs formats (and, in older
 *   versions, name, width and height); `Format` needs size, url (a URL), contentType; dates decode
 *   as ISO 8601.
 * - Android, snabble/Android-SDK `core/src/main/java/io/snabble/sdk/coupons/Coupon.kt`: id, name
 *   non-null; codes a list (its older CouponApi declares it non-null); `ZonedDateTime.parse` of
 *   validFrom / validUntil; `formats.last()` of an image (so never an empty list); format fields
 *   contentType, size, url.
 */
const SdkCoupon = z.object({
  id: z.string(),
  projectID: z.string(),
  name: z.string(),
  type: z.string(),
  description: z.string().nullable().optional(),
  promotionDescription: z.string().nullable().optional(),
  disclaimer: z.string().nullable().optional(),
  code: z.string().nullable(),
  codes: z.array(z.object({ code: z.string(), template: z.string() })),
  colors: z.object({ background: z.string(), foreground: z.string() }),
  image: z
    .object({
      name: z.string(),
      formats: z.array(z.object({ size: z.string(), url: z.url(), contentType: z.string(), width: z.int(), height: z.int() })).min(1),
    })
    .optional(),
  validFrom: z.iso.datetime({ offset: true }).nullable(),
  validUntil: z.iso.datetime({ offset: true }).nullable(),
});
const SdkCouponList = z.object({ coupons: z.array(SdkCoupon) });

const base = { channels: ['app'], type: 'manual' };
const create = (body: object, token = writer) => svc.request('POST', `${p}/coupons`, { token, body });
const get = (id: string, headers: Record<string, string> = {}) => svc.request('GET', `${p}/coupons/${id}`, { token: reader, headers });
const put = (id: string, body: object, ifMatch = '*', token = writer) => svc.request('PUT', `${p}/coupons/${id}`, { token, body, headers: { 'if-match': ifMatch } });
const del = (id: string, ifMatch = '*', token = writer) => svc.request('DELETE', `${p}/coupons/${id}`, { token, headers: { 'if-match': ifMatch } });
const count = async () => (await svc.sql<{ n: number }[]>`select count(*)::int as n from coupons`)[0]!.n;

async function uploaded(bytes: Buffer): Promise<string> {
  const res = await fetch(`${svc.url}${p}/coupons/images`, { method: 'POST', headers: { authorization: `Bearer ${writer}`, 'content-type': 'image/png' }, body: bytes });
  return ((await res.json()) as { ref: string }).ref;
}

t.test('creates a coupon with every field of the spec and the SDKs, keeping the given id', async (t) => {
  const ref = await uploaded(png(120, 60));
  const body = {
    id: 'spring-10',
    channels: ['app', 'sco'],
    type: 'digital',
    redeemType: 'once-per-app-user-id',
    processingType: 'builtin',
    requiresLoyaltyCard: true,
    validFrom: '2026-03-01T00:00:00+01:00',
    validUntil: '2026-03-31T23:59:59.999+02:00',
    translations: {
      name: { de: '10 % auf alles', en: '10 % off everything' },
      description: { de: 'Einmal pro Einkauf', en: 'Once per purchase' },
      disclaimer: { de: 'Nicht mit anderen Aktionen kombinierbar' },
    },
    additionalAttributes: { campaign: 'spring', weight: 3, nested: { list: [1, 'two', null] } },
    code: '9912345000015',
    codes: [{ code: '9912345000015', template: 'ean13' }, { code: 'SPRING10' }],
    colors: { background: '#00AA00', foreground: '#fff' },
    image: { ref },
  };
  const res = await create(body);
  t.equal(res.status, 201);
  t.equal(res.headers.get('location'), `${p}/coupons/spring-10`);
  t.match(res.headers.get('etag'), /^"[^"]+"$/, 'a strong ETag');
  t.same(res.body, {
    id: 'spring-10',
    projectID: TestProject,
    channels: ['app', 'sco'],
    type: 'digital',
    redeemType: 'once-per-app-user-id',
    processingType: 'builtin',
    requiresLoyaltyCard: true,
    validFrom: '2026-02-28T23:00:00.000Z',
    validUntil: '2026-03-31T21:59:59.999Z',
    translations: body.translations,
    additionalAttributes: body.additionalAttributes,
    name: '10 % auf alles',
    description: 'Einmal pro Einkauf',
    disclaimer: 'Nicht mit anderen Aktionen kombinierbar',
    code: '9912345000015',
    codes: [
      { code: '9912345000015', template: 'ean13' },
      { code: 'SPRING10', template: 'default' },
    ],
    colors: { background: '#00AA00', foreground: '#fff' },
    image: { name: '', formats: [{ size: 'xhdpi', url: `${svc.url}${p}/coupons/images/${ref}`, contentType: 'image/png', width: 120, height: 60 }] },
    links: { self: { href: `${p}/coupons/spring-10` } },
  });
  t.ok(SdkCoupon.safeParse(res.body).success, 'the SDKs decode it');
  const read = await get('spring-10');
  t.equal(read.status, 200);
  t.same(read.body, res.body, 'reads as it was answered');
  t.equal(read.headers.get('etag'), res.headers.get('etag'));
});

t.test('generates a UUID v4 id, stores any type, and answers the SDK defaults for what was not given', async (t) => {
  const res = await create({ channels: ['sco'], type: 'a-type-nobody-has-seen' });
  t.equal(res.status, 201);
  t.match(res.body.id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  t.match(res.body, {
    type: 'a-type-nobody-has-seen',
    redeemType: null,
    processingType: null,
    requiresLoyaltyCard: false,
    validFrom: null,
    validUntil: null,
    translations: { name: {}, description: {} },
    additionalAttributes: {},
    name: '',
    description: '',
    code: null,
    codes: [],
    colors: { background: '#FFFFFF', foreground: '#000000' },
  });
  t.notOk('image' in res.body, 'no image: none is answered');
  t.ok(SdkCoupon.safeParse(res.body).success, 'the SDKs decode it');
  t.equal((await get(res.body.id)).status, 200);
});

t.test('lists the coupons in creation order as {coupons}, in parts when they exceed a message', async (t) => {
  const before = (await svc.request('GET', `${p}/coupons`, { token: reader })).body.coupons.length;
  const long = 'x'.repeat(9000);
  const ids: string[] = [];
  for (let i = 0; i < 40; i++) {
    const res = await create({ ...base, id: `bulk-${String(i).padStart(2, '0')}`, translations: { description: Object.fromEntries(['de', 'en', 'fr', 'it', 'es'].map((lang) => [lang, long])) } });
    ids.push(res.body.id);
  }
  const res = await svc.request('GET', `${p}/coupons`, { token: reader });
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /application\/json/);
  t.ok(res.text.length > 1024 * 1024, 'the list is larger than a message');
  t.equal(res.body.coupons.length, before + 40);
  t.same(res.body.coupons.slice(before).map((c: { id: string }) => c.id), ids, 'in creation order');
  t.ok(SdkCouponList.safeParse(res.body).success, 'the SDKs decode the list');
  for (const id of ids) t.equal((await del(id)).status, 204);
});

t.test('a list of the largest coupons, full of characters JSON escapes, still travels in parts', async (t) => {
  const quotes = '"\\'.repeat(5000); // each character escaped in the stored JSON, and again in a list part
  const ids: string[] = [];
  for (let i = 0; i < 4; i++) {
    const res = await create({ ...base, id: `escaped-${i}`, translations: { description: { de: quotes, en: quotes, fr: quotes, it: quotes, es: quotes, nl: quotes } } });
    t.equal(res.status, 201, `a coupon of ${Buffer.byteLength(JSON.stringify(res.body))} bytes`);
    ids.push(res.body.id);
  }
  const res = await svc.request('GET', `${p}/coupons`, { token: reader });
  t.equal(res.status, 200);
  t.same(res.body.coupons.filter((c: { id: string }) => ids.includes(c.id)).map((c: { description: string }) => c.description), ids.map(() => quotes));
  for (const id of ids) t.equal((await del(id)).status, 204);
});

t.test('replaces a coupon with PUT and deletes it with DELETE', async (t) => {
  await create({ ...base, id: 'replace-me', translations: { name: { de: 'Alt' } }, codes: [{ code: 'OLD-1' }] });
  const res = await put('replace-me', { channels: ['sco'], type: 'printed', translations: { name: { de: 'Neu' } }, codes: [{ code: 'NEW-1' }] });
  t.equal(res.status, 200);
  t.match(res.body, { id: 'replace-me', channels: ['sco'], type: 'printed', name: 'Neu', codes: [{ code: 'NEW-1', template: 'default' }] });
  t.same((await get('replace-me')).body, res.body);
  const codes = await svc.sql`select code from coupon_codes where coupon_id = 'replace-me'`;
  t.same(codes.map((r) => r.code), ['NEW-1'], 'the old code is free again');

  t.equal((await put('no-such-coupon', base)).status, 404);
  const gone = await del('replace-me');
  t.equal(gone.status, 204);
  t.equal(gone.text, '');
  const missing = await get('replace-me');
  t.equal(missing.status, 404);
  t.same(missing.body, { error: { type: 'not_found', message: 'no coupon with id replace-me' } }, 'errors are wrapped');
  t.equal((await del('replace-me')).status, 404);
  t.same(await svc.sql`select code from coupon_codes where coupon_id = 'replace-me'`, [], 'its codes went with it');
});

t.test('refuses a second coupon with an id that exists, and changes nothing', async (t) => {
  await create({ ...base, id: 'taken', translations: { name: { de: 'Erster' } } });
  const res = await create({ ...base, id: 'taken', translations: { name: { de: 'Zweiter' } } });
  t.equal(res.status, 409);
  t.same(res.body, { error: { type: 'conflict', message: 'a coupon with id taken already exists' } });
  t.equal((await get('taken')).body.name, 'Erster');
});

t.test('a code names at most one coupon of a project', async (t) => {
  await create({ ...base, id: 'owner', codes: [{ code: '4000001' }], code: 'APP-OWNER' });
  const before = await count();
  const second = await create({ ...base, id: 'claimant', codes: [{ code: '4000002' }, { code: '4000001' }] });
  t.equal(second.status, 409);
  t.same(second.body, { error: { type: 'conflict', message: 'the code 4000001 belongs to coupon owner' } });
  t.equal(await count(), before, 'nothing stored');
  t.equal((await create({ ...base, id: 'claimant-2', code: 'APP-OWNER' })).status, 409, 'the code the apps show counts too');

  await create({ ...base, id: 'other', codes: [{ code: '4000003' }] });
  const taking = await put('other', { ...base, codes: [{ code: '4000001' }] });
  t.equal(taking.status, 409);
  t.equal(taking.body.error.message, 'the code 4000001 belongs to coupon owner');
  t.same((await get('other')).body.codes, [{ code: '4000003', template: 'default' }], 'the coupon is unchanged');
  t.same(await svc.sql`select code from coupon_codes where coupon_id = 'other'`, [{ code: '4000003' }]);

  t.equal((await create({ ...base, id: 'twice', codes: [{ code: 'SAME', template: 'a' }, { code: 'SAME', template: 'b' }], code: 'SAME' })).status, 201, 'a coupon may repeat its own code');
  t.equal((await del('owner')).status, 204);
  t.equal((await create({ ...base, id: 'claimant', codes: [{ code: '4000001' }] })).status, 201, 'a deleted coupon frees its codes');
});

t.test('the checkout finds coupons by id and by scanned code in one statement', async (t) => {
  await create({ ...base, id: 'find-a', codes: [{ code: '5000001' }, { code: '5000002' }] });
  await create({ ...base, id: 'find-b', code: '5000003' });
  await create({ ...base, id: 'find-c' });
  const found = await findCheckoutCoupons(svc.sql, TestProject, ['find-c', 'find-b', 'nope'], ['5000001', '5000002', '5000003', '0000000']);
  t.same(
    found.map((c) => ({ id: c.id, byId: c.by_id, codes: [...c.scanned_codes].sort() })),
    [
      { id: 'find-a', byId: false, codes: ['5000001', '5000002'] },
      { id: 'find-b', byId: true, codes: ['5000003'] },
      { id: 'find-c', byId: true, codes: [] },
    ],
  );
  t.match(found[0]!.doc, { channels: ['app'], type: 'manual', codes: [{ code: '5000001' }, { code: '5000002' }] });
  t.same(await findCheckoutCoupons(svc.sql, 'other-project', ['find-a'], ['5000001']), [], 'only the project\'s coupons');
  t.same(await findCheckoutCoupons(svc.sql, TestProject, [], []), []);
});

t.test('picks name and description by Accept-Language, then the project language, then the first translation', async (t) => {
  await create({
    ...base,
    id: 'languages',
    translations: {
      name: { fr: 'Réduction', de: 'Rabatt', en: 'Discount', 'pt-BR': 'Desconto' },
      description: { de: 'Nur heute' },
    },
  });
  const nameFor = async (acceptLanguage?: string) => (await get('languages', acceptLanguage ? { 'accept-language': acceptLanguage } : {})).body.name as string;
  t.equal(await nameFor(), 'Rabatt', 'the project language (de-DE by default)');
  t.equal(await nameFor('en'), 'Discount');
  t.equal(await nameFor('en-GB'), 'Discount', 'a region falls back to its language');
  t.equal(await nameFor('pt'), 'Desconto', 'a language finds its regional text');
  t.equal(await nameFor('it, en;q=0.5'), 'Discount', 'the best match that exists');
  t.equal(await nameFor('en;q=0.4, fr;q=0.8'), 'Réduction', 'q-values order the ranges');
  t.equal(await nameFor('fr;q=0, en;q=0.1'), 'Discount', 'q=0 excludes a language');
  t.equal(await nameFor('it'), 'Rabatt', 'no match: the project language');
  t.equal(await nameFor('*'), 'Rabatt', '* : the project language');
  t.equal(await nameFor('en;q=bad, fr'), 'Réduction', 'a malformed range is skipped');
  const res = await get('languages', { 'accept-language': 'en' });
  t.equal(res.body.description, 'Nur heute', 'a text without the language falls back');
  t.equal(res.headers.get('vary'), 'Accept-Language');
  const listed = (await svc.request('GET', `${p}/coupons`, { token: reader, headers: { 'accept-language': 'fr' } })).body.coupons.find((c: { id: string }) => c.id === 'languages');
  t.equal(listed.name, 'Réduction', 'the list picks the same way');

  const settingsToken = await svc.token(['projectsWrite']);
  const settings = await svc.request('PUT', `${p}/settings`, {
    token: settingsToken,
    body: { currency: 'EUR', taxRates: { normal: '19' }, paymentMethods: ['cash'], locale: 'pt-BR' },
  });
  t.equal(settings.status, 200);
  t.equal(await nameFor(), 'Desconto', 'the project language follows the settings locale');
  await svc.request('PUT', `${p}/settings`, { token: settingsToken, body: { currency: 'EUR', taxRates: { normal: '19' }, paymentMethods: ['cash'], locale: 'ja-JP' } });
  t.equal(await nameFor(), 'Réduction', 'no text in the project language: the first translation');
  await svc.request('PUT', `${p}/settings`, { token: settingsToken, body: { currency: 'EUR', taxRates: { normal: '19' }, paymentMethods: ['cash'] } });
});

t.test('a picked text is always one of the translations (or "" when there is none), for any header', async (t) => {
  const language = fc.constantFrom('de', 'de-DE', 'de_AT', 'en', 'en-GB', 'fr', 'pt-BR', 'it');
  fc.assert(
    fc.property(fc.dictionary(language, fc.string()), fc.string(), language, (texts, header, locale) => {
      const picked = pickTranslation(texts, acceptedLanguages(header), locale);
      return Object.keys(texts).length === 0 ? picked === '' : Object.values(texts).includes(picked);
    }),
    { numRuns: 2000 },
  );
  t.same(acceptedLanguages('fr-CH, fr;q=0.9, en;q=0.8, de;q=0.7, *;q=0.5'), ['fr-CH', 'fr', 'en', 'de', '*']);
  t.same(acceptedLanguages('en;q=0.5, de'), ['de', 'en'], 'q orders, the header order breaks ties');
});

t.test('a coupon answered may be sent back as it came', async (t) => {
  const ref = await uploaded(png(8, 8));
  const created = await create({ ...base, id: 'round-trip', validFrom: '2026-01-01T00:00:00Z', image: { name: 'banner', formats: [{ ref, size: 'xxhdpi' }, { ref, size: 'mdpi' }] } });
  t.equal(created.status, 201);
  const again = await put('round-trip', created.body, created.headers.get('etag')!);
  t.equal(again.status, 200);
  t.same(again.body, created.body, 'the same coupon (image formats named by their url)');
});

const invalid: Array<[string, object, string]> = [
  ['no channels', { type: 'manual' }, 'channels'],
  ['empty channels', { channels: [], type: 'manual' }, 'channels'],
  ['an unknown channel', { channels: ['web'], type: 'manual' }, 'channels.0'],
  ['a repeated channel', { channels: ['app', 'app'], type: 'manual' }, 'channels'],
  ['no type', { channels: ['app'] }, 'type'],
  ['an empty type', { ...base, type: '' }, 'type'],
  ['a type of 65 characters', { ...base, type: 't'.repeat(65) }, 'type'],
  ['an unknown redeemType', { ...base, redeemType: 'twice' }, 'redeemType'],
  ['an unknown processingType', { ...base, processingType: 'magic' }, 'processingType'],
  ['requiresLoyaltyCard as text', { ...base, requiresLoyaltyCard: 'yes' }, 'requiresLoyaltyCard'],
  ['validFrom without a zone', { ...base, validFrom: '2026-01-01T00:00:00' }, 'validFrom'],
  ['validUntil as a date', { ...base, validUntil: '2026-01-01' }, 'validUntil'],
  ['validFrom after validUntil', { ...base, validFrom: '2026-02-01T00:00:00Z', validUntil: '2026-01-31T23:59:59Z' }, 'validFrom'],
  ['a translation key that is no language code', { ...base, translations: { name: { 'de DE': 'x' } } }, 'translations.name.de DE'],
  ['a name of 501 characters', { ...base, translations: { name: { de: 'n'.repeat(501) } } }, 'translations.name.de'],
  ['translations that are not maps', { ...base, translations: { name: 'Rabatt' } }, 'translations.name'],
  ['additionalAttributes that are no object', { ...base, additionalAttributes: ['a'] }, 'additionalAttributes'],
  ['an id with a slash', { ...base, id: 'a/b' }, 'id'],
  ['an id of 129 characters', { ...base, id: 'i'.repeat(129) }, 'id'],
  ['an empty code', { ...base, codes: [{ code: '' }] }, 'codes.0.code'],
  ['a code without code', { ...base, codes: [{ template: 'ean13' }] }, 'codes.0.code'],
  ['a color that is no hex color', { ...base, colors: { background: 'green' } }, 'colors.background'],
  ['an image without ref', { ...base, image: { name: 'x' } }, 'image.ref'],
  ['an image with a malformed ref', { ...base, image: { ref: 'abc' } }, 'image.ref'],
  ['an image with a url that names no upload', { ...base, image: { formats: [{ url: 'https://cdn.example/x.png' }] } }, 'image.formats.0.ref'],
  ['U+0000 in a name', { ...base, translations: { name: { de: 'a\u0000b' } } }, 'translations.name.de'],
  ['a lone surrogate in the type', { ...base, type: 'x\ud800' }, 'type'],
  ['U+0000 in an attribute key', { ...base, additionalAttributes: { 'a\u0000': 1 } }, 'additionalAttributes.a\u0000'],
  ['a lone surrogate deep in an attribute', { ...base, additionalAttributes: { a: [{ b: '\udc00' }] } }, 'additionalAttributes.a.0.b'],
  ['more than 128 KB', { ...base, additionalAttributes: { big: 'b'.repeat(130 * 1024) } }, ''],
];

t.test('refuses invalid coupons with 400 naming the field, and stores nothing', async (t) => {
  const before = await count();
  for (const [what, body, path] of invalid) {
    const res = await create(body);
    t.equal(res.status, 400, what);
    t.equal(res.body.error?.type, 'bad_request', `${what}: bad_request`);
    t.ok(
      (res.body.error?.details ?? []).some((d: { path: string }) => d.path === path),
      `${what}: names ${path || 'the body'}`,
      { details: res.body.error?.details },
    );
  }
  t.equal(await count(), before, 'nothing stored');
});

t.test('refuses an image that was never uploaded, a body id unlike the path, and a body that is no JSON', async (t) => {
  const before = await count();
  const unknownRef = 'a'.repeat(64);
  const res = await create({ ...base, image: { ref: unknownRef } });
  t.equal(res.status, 400);
  t.same(res.body, { error: { type: 'bad_request', message: `image.formats.0.ref: no uploaded image ${unknownRef} in this project`, details: [{ path: 'image.formats.0.ref' }] } });
  await create({ ...base, id: 'path-id' });
  const mismatch = await put('path-id', { ...base, id: 'body-id' });
  t.equal(mismatch.status, 400);
  t.equal(mismatch.body.error.message, "the body's id body-id differs from the path's id path-id");
  const broken = await svc.request('POST', `${p}/coupons`, { token: writer, raw: '{"channels": [', headers: { 'content-type': 'application/json' } });
  t.equal(broken.status, 400);
  t.equal(broken.body.error.type, 'bad_request');
  t.equal(await count(), before + 1);
});

t.test('each operation needs its permission, a token of the project, and changes nothing without', async (t) => {
  await create({ ...base, id: 'guarded', translations: { name: { de: 'Geschützt' } } });
  const before = await count();
  const otherProject = await svc.token(['couponsRead', 'couponsWrite'], { project: 'other-project' });
  const cases: Array<[string, string, string | undefined, object | undefined, string]> = [
    ['GET', `${p}/coupons`, writer, undefined, 'couponsRead'],
    ['GET', `${p}/coupons/guarded`, writer, undefined, 'couponsRead'],
    ['POST', `${p}/coupons`, reader, { ...base, id: 'sneaky' }, 'couponsWrite'],
    ['PUT', `${p}/coupons/guarded`, reader, { ...base }, 'couponsWrite'],
    ['DELETE', `${p}/coupons/guarded`, reader, undefined, 'couponsWrite'],
    ['POST', `${p}/coupons/images`, reader, undefined, 'couponsWrite'],
  ];
  for (const [method, path, token, body, permission] of cases) {
    const headers = { 'if-match': '*' };
    const lacking = await svc.request(method, path, { token, body, headers });
    t.equal(lacking.status, 403, `${method} ${path} without ${permission}`);
    t.same(lacking.body, { error: { type: 'forbidden', message: `the token lacks the permission ${permission}` } });
    const foreign = await svc.request(method, path, { token: otherProject, body, headers });
    t.equal(foreign.status, 403, `${method} ${path} with another project's token`);
    const anonymous = await svc.request(method, path, { body, headers });
    t.equal(anonymous.status, 403, `${method} ${path} without a token`);
  }
  t.equal(await count(), before, 'nothing stored or deleted');
  t.equal((await svc.request('GET', `${p}/coupons/guarded`, { token: both })).body.name, 'Geschützt', 'unchanged');
});

t.test('publishes changed on create and replace, deleted on delete, each with its version', async (t: Test) => {
  const created = await create({ ...base, id: 'evented', translations: { name: { de: 'Eins' } } });
  const replaced = await put('evented', { ...base, translations: { name: { de: 'Zwei' } } }, created.headers.get('etag')!);
  await del('evented', replaced.headers.get('etag')!);
  await create({ ...base, id: 'never', codes: [{ code: '4000003' }] }); // refused: the code is taken
  await events.settle();
  const mine = events.of('evented');
  t.same(
    mine.map((e) => [e.subject, e.payload.version]),
    [
      [`events.${TestProject}.coupon.evented.changed`, 1],
      [`events.${TestProject}.coupon.evented.changed`, 2],
      [`events.${TestProject}.coupon.evented.deleted`, 3],
    ],
  );
  for (const e of mine) t.ok(CouponEvent.safeParse(e.payload).success, `${e.event} matches its schema`);
  t.match(mine[0]!.payload, { project: TestProject, id: 'evented', event: 'changed', etag: created.headers.get('etag'), coupon: { name: 'Eins' } });
  t.match(mine[1]!.payload, { etag: replaced.headers.get('etag'), coupon: { name: 'Zwei' } });
  t.same(events.of('never'), [], 'a refused write publishes nothing');
});

t.test('the OpenAPI document describes every coupon operation with its permission', async (t) => {
  const doc = (await svc.request('GET', '/openapi.json')).body as { paths?: Record<string, Record<string, { 'x-permissions'?: string[]; security?: unknown[] }>> };
  const op = (path: string, method: string) => doc.paths?.[path]?.[method];
  t.same(op('/{project}/coupons', 'get')?.['x-permissions'], ['couponsRead']);
  t.same(op('/{project}/coupons', 'post')?.['x-permissions'], ['couponsWrite']);
  t.same(op('/{project}/coupons/{couponID}', 'get')?.['x-permissions'], ['couponsRead']);
  t.same(op('/{project}/coupons/{couponID}', 'put')?.['x-permissions'], ['couponsWrite']);
  t.same(op('/{project}/coupons/{couponID}', 'delete')?.['x-permissions'], ['couponsWrite']);
  t.same(op('/{project}/coupons/images', 'post')?.['x-permissions'], ['couponsWrite']);
  t.same(op('/{project}/coupons/images/{ref}', 'get')?.security, [], 'the image GET is public');
});
