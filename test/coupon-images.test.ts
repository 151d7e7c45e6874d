import { createHash } from 'node:crypto';
import fc from 'fast-check';
import t from 'tap';
import { formatOf, readImage } from '../src/domain/coupons/images.js';
import { gif, jpeg, png, webp } from './support/coupon-images.js';
import { startTestService, TestProject } from './support/service.js';

/** Coupon images: upload (multipart or raw), recognition by bytes, limits, serving, and coupons that show them. */
const svc = await startTestService(t);
const p = `/${TestProject}`;
const writer = await svc.token(['couponsWrite', 'couponsRead']);
const MB = 1024 * 1024;

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const images = async () => (await svc.sql<{ n: number }[]>`select count(*)::int as n from coupon_images`)[0]!.n;

async function answer(res: Response) {
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text };
}

function uploadRaw(bytes: Buffer, contentType: string, token = writer) {
  return fetch(`${svc.url}${p}/coupons/images`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': contentType }, body: bytes }).then(answer);
}

function uploadForm(bytes: Buffer, options: { field?: string; type?: string; filename?: string } = {}) {
  const form = new FormData();
  form.append('note', 'fields before the file are fine');
  form.append(options.field ?? 'file', new Blob([bytes], { type: options.type ?? 'application/octet-stream' }), options.filename ?? 'image.bin');
  return fetch(`${svc.url}${p}/coupons/images`, { method: 'POST', headers: { authorization: `Bearer ${writer}` }, body: form }).then(answer);
}

const download = (ref: string, headers: Record<string, string> = {}, project = TestProject) =>
  fetch(`${svc.url}/${project}/coupons/images/${ref}`, { headers }).then(async (res) => ({ status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) }));

const formats = [
  { name: 'PNG', bytes: png(33, 17), contentType: 'image/png' },
  { name: 'JPEG', bytes: jpeg(40, 24), contentType: 'image/jpeg' },
  { name: 'WebP', bytes: webp(25, 9), contentType: 'image/webp' },
  { name: 'GIF', bytes: gif(7, 5), contentType: 'image/gif' },
];

t.test('the image reader tells the formats by their bytes and reads their size', async (t) => {
  t.match(readImage(png(33, 17)), { format: 'png', width: 33, height: 17 });
  t.match(readImage(jpeg(40, 24)), { format: 'jpeg', width: 40, height: 24 });
  t.match(readImage(webp(25, 9)), { format: 'webp', width: 25, height: 9 });
  t.match(readImage(gif(7, 5)), { format: 'gif', width: 7, height: 5 });
  // Lossy and extended WebP headers (their image data is not needed to read the size).
  const riff = (chunk: string, body: number[]) => Buffer.from([...Buffer.from(`RIFF\0\0\0\0WEBP${chunk}\0\0\0\0`), ...body]);
  t.match(readImage(riff('VP8 ', [0, 0, 0, 0x9d, 0x01, 0x2a, 300 & 0xff, 300 >> 8, 200 & 0xff, 200 >> 8])), { format: 'webp', width: 300, height: 200 });
  t.match(readImage(riff('VP8X', [0, 0, 0, 0, 0x1f, 0x03, 0, 0x0f, 0, 0])), { format: 'webp', width: 800, height: 16 });
  t.equal(readImage(png(33, 17).subarray(0, 20)), undefined, 'a PNG cut short');
  t.equal(readImage(Buffer.from('GIF89a')), undefined, 'a GIF without a screen descriptor');
  t.equal(readImage(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 4, 0, 0, 0xff, 0xda, 0, 2])), undefined, 'a JPEG whose scan comes before any frame');
  t.equal(formatOf(Buffer.from('BM\0\0\0\0\0\0\0\0\0\0')), undefined, 'BMP is not taken');
});

t.test('the image reader never throws, whatever the bytes, and reads sizes in range', async (t) => {
  const signatures = [[0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], [0xff, 0xd8, 0xff], [...Buffer.from('GIF89a')], [...Buffer.from('RIFF\0\0\0\0WEBPVP8')]];
  const bytes = fc.oneof(
    fc.uint8Array({ maxLength: 200 }),
    fc.tuple(fc.constantFrom(...signatures), fc.uint8Array({ maxLength: 200 })).map(([head, tail]) => Uint8Array.from([...head, ...tail])),
  );
  fc.assert(
    fc.property(bytes, (b) => {
      const info = readImage(b);
      return info === undefined || (info.width >= 1 && info.height >= 1 && info.width <= 0x7fffffff && info.height <= 0x7fffffff);
    }),
    { numRuns: 5000 },
  );
  t.pass('5000 byte strings read without an exception');
});

for (const format of formats) {
  t.test(`stores a ${format.name} sent as multipart or as the raw body, named by the SHA-256 of its bytes`, async (t) => {
    const info = readImage(format.bytes)!;
    const expected = { ref: sha256(format.bytes), contentType: format.contentType, width: info.width, height: info.height, size: format.bytes.length };
    const first = await uploadForm(format.bytes, { type: format.contentType });
    t.equal(first.status, 201);
    t.same(first.body, expected);
    t.equal(first.headers.get('location'), `${p}/coupons/images/${expected.ref}`);
    // A declared type is not trusted: the bytes say what the file is.
    const again = await uploadRaw(format.bytes, format.contentType === 'image/png' ? 'image/jpeg' : 'image/png');
    t.equal(again.status, 200, 'the same bytes again: the image exists already');
    t.same(again.body, expected);

    const served = await download(expected.ref);
    t.equal(served.status, 200);
    t.same(served.bytes, format.bytes, 'the bytes as uploaded');
    t.equal(served.headers.get('content-type'), format.contentType);
    t.equal(served.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    t.equal(served.headers.get('etag'), `"${expected.ref}"`);
    const cached = await download(expected.ref, { 'if-none-match': `"${expected.ref}"` });
    t.equal(cached.status, 304);
    t.equal(cached.bytes.length, 0);
  });
}

t.test('refuses a file of another format with 415, whatever its declared type, and stores nothing', async (t) => {
  const before = await images();
  const others: Array<[string, Buffer]> = [
    ['text', Buffer.from('hello, this is not an image')],
    ['a BMP', Buffer.concat([Buffer.from('BM'), Buffer.alloc(60)])],
    ['an SVG', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>')],
    ['a PDF', Buffer.from('%PDF-1.7\n%âãÏÓ\n')],
    ['an empty file', Buffer.alloc(0)],
    ['a PNG whose header is cut short', png(10, 10).subarray(0, 20)],
  ];
  for (const [what, bytes] of others) {
    const raw = await uploadRaw(bytes, 'image/png');
    t.equal(raw.status, 415, `${what} as image/png`);
    t.equal(raw.body.error?.type, 'unsupported_media_type');
    t.equal((await uploadForm(bytes, { type: 'image/png' })).status, 415, `${what} as multipart`);
  }
  const json = await svc.request('POST', `${p}/coupons/images`, { token: writer, body: { file: 'aGVsbG8=' } });
  t.equal(json.status, 415, 'a JSON body');
  t.equal(json.body.error.type, 'unsupported_media_type');
  t.equal((await uploadRaw(png(2, 2), 'application/octet-stream')).status, 415, 'a raw body without an image type');
  t.equal(await images(), before);
});

t.test('refuses a file over 5 MB with 413, takes one of exactly 5 MB, and serves it whole', async (t) => {
  const before = await images();
  const tooLarge = png(4, 4, { padTo: 5 * MB + 1 });
  const raw = await uploadRaw(tooLarge, 'image/png');
  t.equal(raw.status, 413);
  t.same(raw.body.error?.type, 'payload_too_large');
  const form = await uploadForm(tooLarge, { type: 'image/png' });
  t.equal(form.status, 413);
  t.same(form.body.error?.type, 'payload_too_large');
  t.equal(await images(), before, 'nothing stored');

  // Larger than a NATS message: it travels to the workers in parts and back in parts.
  const large = png(4, 4, { padTo: 5 * MB });
  const stored = await uploadForm(large);
  t.equal(stored.status, 201);
  t.same(stored.body, { ref: sha256(large), contentType: 'image/png', width: 4, height: 4, size: 5 * MB });
  const served = await download(stored.body.ref);
  t.equal(served.status, 200);
  t.equal(served.headers.get('content-length'), String(5 * MB));
  t.ok(served.bytes.equals(large), 'the same 5 MB');
  t.equal((await uploadRaw(large, 'image/png')).status, 200, 'raw, the same image');
  const [parts] = await svc.sql<{ n: number }[]>`select count(*)::int as n from coupon_image_parts`;
  t.equal(parts!.n, 0, 'no upload parts are left behind');
});

t.test('a multipart upload needs the image in the field file', async (t) => {
  const res = await uploadForm(png(2, 2), { field: 'image' });
  t.equal(res.status, 400);
  t.same(res.body, { error: { type: 'bad_request', message: 'the image goes in the field "file", not "image"' } });
  const empty = new FormData();
  empty.append('note', 'no file');
  const none = await fetch(`${svc.url}${p}/coupons/images`, { method: 'POST', headers: { authorization: `Bearer ${writer}` }, body: empty }).then(answer);
  t.equal(none.status, 400);
});

t.test('serves images without a token, only to their project, and 404 for an unknown ref', async (t) => {
  const bytes = png(3, 3);
  const ref = (await uploadRaw(bytes, 'image/png')).body.ref as string;
  t.equal((await download(ref)).status, 200, 'no token needed');
  t.equal((await download(ref, {}, 'other-project')).status, 404, "another project's path");
  const unknown = await download('0'.repeat(64));
  t.equal(unknown.status, 404);
  t.same(JSON.parse(unknown.bytes.toString()), { error: { type: 'not_found', message: `no image ${'0'.repeat(64)}` } });
  t.equal((await download('0'.repeat(64), { 'if-none-match': `"${'0'.repeat(64)}"` })).status, 404, 'not even as not modified');
  t.equal((await download('not-a-ref')).status, 400);
});

t.test('other routes still refuse multipart and image bodies with 415', async (t) => {
  const form = new FormData();
  form.append('file', new Blob([png(2, 2)]));
  const shops = await fetch(`${svc.url}${p}/shops`, { method: 'POST', headers: { authorization: `Bearer ${await svc.token(['shopsWrite'])}` }, body: form });
  t.equal(shops.status, 415);
  const coupons = await fetch(`${svc.url}${p}/coupons`, { method: 'POST', headers: { authorization: `Bearer ${writer}`, 'content-type': 'image/png' }, body: png(2, 2) });
  t.equal(coupons.status, 415);
});

t.test('a coupon shows uploaded images as the formats the SDKs decode', async (t) => {
  const small = await uploadRaw(webp(60, 40), 'image/webp');
  const big = await uploadRaw(png(180, 120), 'image/png');
  const res = await svc.request('POST', `${p}/coupons`, {
    token: writer,
    body: { channels: ['app'], type: 'digital', image: { name: 'summer', formats: [{ ref: small.body.ref, size: 'mdpi' }, { ref: big.body.ref, size: 'xxhdpi' }] } },
  });
  t.equal(res.status, 201);
  t.same(res.body.image, {
    name: 'summer',
    formats: [
      { size: 'mdpi', url: `${svc.url}${p}/coupons/images/${small.body.ref}`, contentType: 'image/webp', width: 60, height: 40 },
      { size: 'xxhdpi', url: `${svc.url}${p}/coupons/images/${big.body.ref}`, contentType: 'image/png', width: 180, height: 120 },
    ],
  });
  for (const format of res.body.image.formats) t.equal((await fetch(format.url)).status, 200, `${format.url} serves the image`);
});
