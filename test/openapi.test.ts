import t from 'tap';
import { Permissions } from '../src/auth/permissions.js';
import { startTestService } from './support/service.js';

const svc = await startTestService(t);

interface Operation {
  summary?: string;
  description?: string;
  security?: unknown[];
  'x-permissions'?: string[];
  responses?: Record<string, unknown>;
}
const doc = (await svc.request('GET', '/openapi.json')).body as { openapi: string; paths: Record<string, Record<string, Operation>> };
const operations = Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ path, method, op })));

t.test('serves an OpenAPI 3.1 document generated from the zod schemas', async (t) => {
  t.equal(doc.openapi, '3.1.0');
  const shopBody = doc.paths['/{project}/shops']?.post as { requestBody?: { content: Record<string, { schema: { properties: object; required: string[] } }> } };
  const schema = shopBody.requestBody?.content['application/json']?.schema;
  t.ok(schema, 'the create-shop body is described');
  t.match(Object.keys(schema?.properties ?? {}), ['id', 'externalId', 'name', 'email']);
  t.notOk(schema?.required?.length, 'no field is required: the spec marks none');
});

t.test('names the permission of every project operation', async (t) => {
  const projectOps = operations.filter((o) => o.path.startsWith('/{project}'));
  t.ok(projectOps.length >= 8);
  for (const { path, method, op } of projectOps) {
    const permissions = op['x-permissions'];
    t.ok(Array.isArray(permissions), `${method} ${path} lists its permissions`);
    t.ok(permissions?.every((p) => (Permissions as readonly string[]).includes(p)), `${method} ${path} names known permissions`);
    // A bearer token, which a service client may also get by OAuth 2.0 client credentials with the
    // operation's permissions as its scope; PoS routes also take a PoS credential.
    const bearer = [{ bearerAuth: [] }, { oauth2: permissions ?? [] }];
    const ownCredential = /No token needed: the credential below/.test(op.description ?? '');
    const expected = path.startsWith('/{project}/pos/checkout/')
      ? [...bearer, { posBasicAuth: [] }]
      : permissions?.length === 0 && (/Public/.test(op.description ?? '') || ownCredential)
        ? []
        : bearer;
    if (ownCredential) {
      t.ok(op.security?.some((s) => Object.keys(s as object).some((name) => /BasicAuth$/.test(name))), `${method} ${path} names the Basic credential it takes`);
      continue;
    }
    t.same(op.security, expected, `${method} ${path}: ${expected?.length ? 'a bearer token (or a PoS credential on PoS routes)' : 'public'}`);
    t.match(op.description, /Permission: |Any valid token|Public: no token|A token whose `appUserID`|No token needed: the credential below/);
  }
  const permissionOf = (method: string, path: string) => doc.paths[path]?.[method]?.['x-permissions'];
  t.same(permissionOf('get', '/{project}/shops'), ['shopsRead']);
  t.same(permissionOf('delete', '/{project}/shops/{id}'), ['shopsWrite']);
  t.same(permissionOf('put', '/{project}/settings'), ['projectsWrite']);
  const publicOps = projectOps.filter((o) => o.op.security?.length === 0).map((o) => `${o.method} ${o.path}`);
  t.same(publicOps, ['get /{project}/coupons/images/{ref}'], 'only coupon images are public (their ref is the hash of the image)');
});

t.test('lists every route the edge serves', async (t) => {
  const documented = new Set(operations.map((o) => `${o.method.toUpperCase()} ${o.path.replace(/\{(\w+)\}/g, ':$1')}`));
  const served = servedRoutes(svc.service.edge!.printRoutes({ commonPrefix: false }))
    // The portal's pages and assets are no API (its /portal/api routes are).
    .filter((r) => !r.includes(' /docs') && !r.startsWith('HEAD ') && r !== 'GET /openapi.json' && r !== 'GET /portal' && r !== 'GET /portal*');
  t.ok(served.length >= 9, served.join('\n'));
  for (const route of served) t.ok(documented.has(route), `${route} is documented`);
});

/** Turns Fastify's route tree ("├── /:id (GET, PUT)", indented per level) into "METHOD /path" lines. */
function servedRoutes(tree: string): string[] {
  const prefixes: string[] = [];
  const routes: string[] = [];
  for (const line of tree.split('\n')) {
    const match = /^([│ ]*)[├└]── (\S+) \(([^)]+)\)/.exec(line);
    if (!match) continue;
    const depth = (match[1] ?? '').length / 4;
    prefixes.length = depth;
    const path = `${prefixes.join('')}${match[2]}`;
    prefixes.push(match[2] ?? '');
    for (const method of (match[3] ?? '').split(', ')) routes.push(`${method} ${path}`);
  }
  return routes;
}

t.test('serves the documentation UI at /docs', async (t) => {
  const res = await fetch(`${svc.url}/docs/`);
  t.equal(res.status, 200);
  t.match(await res.text(), /swagger/i);
});
