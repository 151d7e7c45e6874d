import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { projectRoot } from '../../infra/project-root.js';
import { AppError } from '../../errors.js';
import { ContentSecurityPolicies } from '../security-headers.js';
import type { ZodApp } from '../schemas.js';

/**
 * Serves the retailer portal (portal/, built by `npm run build` into dist/portal): its script and
 * the chunks it loads when needed, its stylesheet, and its page for every other path under
 * /portal/ (the portal's screens are paths). Files are read once at start with the gzip and brotli
 * copies the build wrote; the answer is the smallest the browser accepts, revalidated by ETag.
 */
interface Asset {
  type: string;
  etag: string;
  encodings: Array<{ name: 'br' | 'gzip' | 'identity'; bytes: Buffer }>;
}

const Types: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.html': 'text/html; charset=utf-8' };

function loadAssets(dir: string): Map<string, Asset> | undefined {
  if (!existsSync(path.join(dir, 'index.html'))) return undefined;
  const assets = new Map<string, Asset>();
  for (const name of readdirSync(dir)) {
    const type = Types[path.extname(name)];
    if (!type) continue;
    const identity = readFileSync(path.join(dir, name));
    const etag = `"${createHash('sha256').update(identity).digest('base64url').slice(0, 22)}"`;
    const encodings: Asset['encodings'] = [
      { name: 'br', bytes: readFileSync(path.join(dir, `${name}.br`)) },
      { name: 'gzip', bytes: readFileSync(path.join(dir, `${name}.gz`)) },
      { name: 'identity', bytes: identity },
    ];
    assets.set(name, { type, etag, encodings });
  }
  return assets;
}

function accepted(header: string | undefined): Set<string> {
  const names = new Set(['identity']);
  for (const part of (header ?? '').split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (name && !params.some((p) => /^\s*q=0(\.0*)?\s*$/.test(p))) names.add(name);
  }
  return names;
}

export function portalRoutes(app: ZodApp, options: { dir?: string } = {}): void {
  const assets = loadAssets(options.dir ?? path.join(projectRoot(), 'dist/portal'));

  const send = (request: FastifyRequest, reply: FastifyReply, name: string) => {
    if (!assets) throw AppError.unavailable('the portal is not built: run npm run build');
    const asset = assets.get(name) ?? assets.get('index.html')!;
    reply.header('content-type', asset.type).header('etag', asset.etag).header('cache-control', 'no-cache').header('vary', 'accept-encoding');
    if (asset.type.startsWith('text/html')) reply.header('content-security-policy', ContentSecurityPolicies.portal);
    if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send();
    const accepts = accepted(request.headers['accept-encoding']);
    const chosen = asset.encodings.find((e) => accepts.has(e.name))!;
    if (chosen.name !== 'identity') reply.header('content-encoding', chosen.name);
    return reply.send(chosen.bytes);
  };

  const schema = { hide: true };
  // The router ignores a trailing slash: this is /portal/ too.
  app.get('/portal', { schema }, async (request, reply) => send(request, reply, 'index.html'));
  app.get('/portal/*', { schema }, async (request, reply) => send(request, reply, (request.params as { '*': string })['*']));
}
