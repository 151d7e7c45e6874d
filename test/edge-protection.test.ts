import { execFileSync } from 'node:child_process';
import path from 'node:path';
import t, { type Test } from 'tap';
import { p } from './support/checkout.js';
import { png } from './support/coupon-images.js';
import type { HttpResponse } from './support/http.js';
import { startMoreEdge, startTestService } from './support/service.js';

/** Security headers on every answer. */
const svc = await startTestService(t);
const admin = await svc.token(['projectsWrite', 'shopsRead', 'shopsWrite']);

function assertSecurityHeaders(t: Test, res: HttpResponse, what: string) {
  t.equal(res.headers.get('x-content-type-options'), 'nosniff', `${what}: nosniff`);
  t.equal(res.headers.get('referrer-policy'), 'no-referrer', `${what}: no referrer`);
  t.equal(res.headers.get('x-frame-options'), 'DENY', `${what}: no framing`);
  t.equal(res.headers.get('strict-transport-security'), null, `${what}: no HSTS without TLS`);
}

function assertDataPolicy(t: Test, res: HttpResponse, what: string) {
  const csp = res.headers.get('content-security-policy') ?? '';
  t.match(csp, /default-src 'none'/, `${what}: loads nothing`);
  t.match(csp, /frame-ancestors 'none'/, `${what}: framed by nothing`);
}

t.test('an authenticated API answer carries the security headers, the data policy and no-store', async (t) => {
  const res = await svc.request('GET', `${p}/shops`, { token: admin });
  t.equal(res.status, 200, res.text);
  assertSecurityHeaders(t, res, 'GET shops');
  assertDataPolicy(t, res, 'GET shops');
  t.equal(res.headers.get('cache-control'), 'no-store', "a token's data is not cached");
});

t.test('routes with caching of their own keep it: a coupon revalidates by ETag, a coupon image is cached for a year', async (t) => {
  const writer = await svc.token(['couponsRead', 'couponsWrite']);
  const image = await fetch(`${svc.url}${p}/coupons/images`, { method: 'POST', headers: { authorization: `Bearer ${writer}`, 'content-type': 'image/png' }, body: png(20, 10) });
  const { ref } = (await image.json()) as { ref: string };
  const imageRes = await svc.request('GET', `${p}/coupons/images/${ref}`);
  t.equal(imageRes.status, 200);
  t.equal(imageRes.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  t.equal(imageRes.headers.get('cross-origin-resource-policy'), 'cross-origin', 'pages of other origins may show it');
  t.equal(imageRes.headers.get('x-content-type-options'), 'nosniff');

  const created = await svc.request('POST', `${p}/coupons`, { token: writer, body: { id: 'cached-10', name: 'Ten off', channels: ['app'], type: 'manual' } });
  t.equal(created.status, 201, created.text);
  const coupon = await svc.request('GET', `${p}/coupons/cached-10`, { token: writer });
  t.equal(coupon.headers.get('cache-control'), 'private, no-cache', 'kept by the client only, and asked for again');
  const again = await svc.request('GET', `${p}/coupons/cached-10`, { token: writer, headers: { 'if-none-match': coupon.headers.get('etag') ?? '' } });
  t.equal(again.status, 304, 'If-None-Match still saves the body');
});

t.test('an edge that serves TLS sends Strict-Transport-Security', async (t) => {
  const dir = svc.config.dataDir;
  const [certFile, keyFile] = [path.join(dir, 'edge.crt'), path.join(dir, 'edge.key')];
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1', '-keyout', keyFile, '-out', certFile], { stdio: 'ignore' });
  const tlsEdge = await startMoreEdge(t, svc, { TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile });
  t.match(tlsEdge.url, /^https:/);
  // inject: the answer as the edge builds it, without a client that must trust the certificate.
  const res = await tlsEdge.service.edge!.inject({ method: 'GET', url: '/health' });
  t.match(res.headers['strict-transport-security'], /max-age=31536000/);
  t.equal(res.headers['x-content-type-options'], 'nosniff');
});

t.test('error answers (400, 403, 404, 405) carry the security headers and the data policy', async (t) => {
  const answers: Array<[string, HttpResponse, number]> = [
    ['a body that fails validation', await svc.request('POST', `${p}/shops`, { token: admin, body: { id: 42 } }), 400],
    ['no token', await svc.request('GET', `${p}/shops`), 403],
    ['no route', await svc.request('GET', '/no/such/route'), 404],
    ['a wrong method', await svc.request('PATCH', '/health'), 405],
  ];
  for (const [what, res, status] of answers) {
    t.equal(res.status, status, `${what}: ${res.text}`);
    assertSecurityHeaders(t, res, what);
    assertDataPolicy(t, res, what);
  }
});

t.test('/health and /openapi.json carry the security headers; nothing public is marked no-store', async (t) => {
  for (const path of ['/health', '/openapi.json']) {
    const res = await svc.request('GET', path);
    t.equal(res.status, 200, path);
    assertSecurityHeaders(t, res, path);
    assertDataPolicy(t, res, path);
    t.not(res.headers.get('cache-control'), 'no-store', `${path} carries no token's data`);
  }
});

t.test('/docs gets a strict page policy: its own scripts and styles only, no inline script', async (t) => {
  const page = await svc.request('GET', '/docs/');
  t.equal(page.status, 200);
  t.match(page.text, /<script src=/);
  t.notMatch(page.text, /<script>|<script [^>]*>\s*[^<\s]/, 'the page has no inline script for the policy to forbid');
  assertSecurityHeaders(t, page, '/docs');
  const csp = page.headers.get('content-security-policy') ?? '';
  t.match(csp, /default-src 'none'/);
  t.match(csp, /script-src 'self'(;|$)/);
  t.match(csp, /style-src 'self'(;|$)/);
  t.match(csp, /connect-src 'self'/, 'the page may fetch the document from the edge');
  t.match(csp, /frame-ancestors 'none'/);
  t.notMatch(csp, /unsafe-inline|unsafe-eval/);
  const initializer = await svc.request('GET', '/docs/static/swagger-initializer.js');
  t.equal(initializer.status, 200);
  t.equal(initializer.headers.get('x-content-type-options'), 'nosniff');
  t.match(initializer.text, /openapi|json/, 'the initializer the page loads is served');
});
