import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import helmet, { type HelmetOptions } from 'helmet';

/**
 * Security headers on every answer, chosen by helmet (the maintained library behind @fastify/helmet),
 * set for an API. helmet works out the headers once, at start, and an onRequest hook sets them in one
 * call: helmet's middleware on every request cost the service about 20 µs per answer (a tenth of a
 * checkout info, measured with the bench). Registered before every other hook, so that answers refused in onRequest (403, 429), 404s and 405s carry them too.
 *
 * - Content-Security-Policy per kind of answer (ContentSecurityPolicies): JSON and other data
 *   answers may load and be framed by nothing; an HTML page gets a policy of its own.
 * - X-Content-Type-Options: nosniff, Referrer-Policy: no-referrer, X-Frame-Options: DENY.
 * - Strict-Transport-Security only when the edge serves TLS itself: over plain HTTP a browser
 *   ignores it, and a TLS-terminating proxy in front sets its own.
 * - Cache-Control: no-store on answers to a token or PoS credential, unless the route sets its own
 *   caching (receipts: private and an ETag). An answer with an ETag but no caching of its own (a
 *   coupon) gets `private, no-cache`: the client may keep it but asks again, so that If-None-Match
 *   still saves the body, and no shared cache keeps it.
 */
export const ContentSecurityPolicies = {
  /** JSON, ndjson, PDFs, images: nothing to load, nothing may frame them. */
  data: "default-src 'none'; frame-ancestors 'none'",
  /**
   * The swagger-ui page at /docs: its scripts and styles are files the edge serves (no inline
   * script), the document is fetched from the same origin, and the bundle's icons are data: URLs.
   */
  docs: [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; '),
  /**
   * The retailer portal at /portal (design.md "Retailer portal"): its script and stylesheet are files
   * the edge serves, it talks to the API of the same origin (fetch and server-sent events), shows
   * coupon images and charts, and a receipt PDF it fetched as a blob: URL in a frame.
   */
  portal: [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob:",
    "connect-src 'self'",
    "frame-src blob:",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; '),
} as const;

export function registerSecurityHeaders(app: FastifyInstance, options: { tls: boolean }): void {
  const headers = headersOf({
    contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
    strictTransportSecurity: options.tls ? { maxAge: 31_536_000, includeSubDomains: true } : false,
    referrerPolicy: { policy: 'no-referrer' },
    frameguard: { action: 'deny' },
    // Coupon images are loaded by apps and pages of other origins (their route says cross-origin).
    crossOriginResourcePolicy: { policy: 'same-origin' },
    // Headers for HTML documents in old or particular browsers (IE's download and XSS filters,
    // Flash's cross-domain policies, DNS prefetching, opener and agent-cluster isolation of pages)
    // mean nothing on an API's answers, and every answer carried their bytes: left out. The HTML
    // pages (/docs) are covered by their Content-Security-Policy, nosniff and frame denial.
    crossOriginOpenerPolicy: false,
    originAgentCluster: false,
    xDnsPrefetchControl: false,
    xDownloadOptions: false,
    xPermittedCrossDomainPolicies: false,
    xXssProtection: false,
  });
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(headers);
    done();
  });

  // A callback hook, not an async one: it runs on every answer, and a promise each is measurable.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (request.principal && !reply.hasHeader('cache-control')) reply.header('cache-control', reply.hasHeader('etag') ? 'private, no-cache' : 'no-store');
    done(null, payload);
  });
}

/** The headers helmet sets for these options, captured once from its middleware. */
function headersOf(options: HelmetOptions): Record<string, string> {
  const headers: Record<string, string> = {};
  const response = {
    setHeader: (name: string, value: string | number | readonly string[]) => (headers[name.toLowerCase()] = String(value)),
    removeHeader: (name: string) => delete headers[name.toLowerCase()],
  } as unknown as ServerResponse;
  helmet(options)({} as IncomingMessage, response, (err?: unknown) => {
    if (err) throw new Error('helmet refused the security header options', { cause: err });
  });
  return headers;
}
