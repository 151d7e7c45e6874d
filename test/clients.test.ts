import t from 'tap';
import { RetailerAppPermissions } from '../src/auth/client-roles.js';
import { startTestService, TestProject } from './support/service.js';

/**
 * The clients resource (/{project}/clients, projectsWrite): apps and service clients made with
 * their secret shown once, listed and shown without it, rotated, deleted; bad input refused field
 * by field, unknown and foreign ids not found, and the secrets kept sealed or hashed.
 */
const svc = await startTestService(t);
const p = `/${TestProject}`;
const owner = await svc.token(['projectsWrite']);
const foreignOwner = await svc.token(['projectsWrite'], { project: 'other-proj01' });

let app: any;
let service: any;

t.test('makes an app and a service client, each with its secret once, a Location and no-store', async (t) => {
  const made = await svc.request('POST', `${p}/clients`, { token: owner, body: { kind: 'app', name: 'Kunden-App' } });
  t.equal(made.status, 201, made.text);
  app = made.body;
  t.match(app, { id: /^app-[a-z2-7]{20}$/, name: 'Kunden-App', kind: 'app', tokenLifetimeSeconds: 3600, appUsers: 0, links: { self: { href: `${p}/clients/${app.id}` } } });
  t.same(app.permissions, [...RetailerAppPermissions], "an app's permissions are the role retailerApp's");
  t.match(app.secret, /^[A-Z2-7]{52}====$/, 'its TOTP key: 32 bytes as RFC 4648 Base32');
  t.equal(made.headers.get('location'), `${p}/clients/${app.id}`);
  t.equal(made.headers.get('cache-control'), 'no-store');

  const svcMade = await svc.request('POST', `${p}/clients`, { token: owner, body: { kind: 'service', name: 'ERP', permissions: ['ordersRead', 'closingsRead'], tokenLifetimeSeconds: 86400 } });
  t.equal(svcMade.status, 201, svcMade.text);
  service = svcMade.body;
  t.match(service, { id: /^svc-[a-z2-7]{20}$/, kind: 'service', permissions: ['ordersRead', 'closingsRead'], tokenLifetimeSeconds: 86400 });
  t.match(service.secret, /^[A-Za-z0-9_-]{43}$/, 'its secret: 256 random bits');
  t.equal(service.appUsers, undefined, 'a service has no app users');
});

t.test('lists and shows clients without their secrets, apps with their count of app users', async (t) => {
  const list = await svc.request('GET', `${p}/clients`, { token: owner });
  t.equal(list.status, 200);
  t.same(list.body.clients.map((c: any) => c.id), [app.id, service.id], 'oldest first');
  t.notOk(list.text.includes(app.secret) || list.text.includes(service.secret) || list.text.includes('"secret"'), 'no secret');
  const one = await svc.request('GET', `${p}/clients/${service.id}`, { token: owner });
  const { secret: _secret, ...withoutSecret } = service;
  t.same(one.body, withoutSecret);
  await svc.sql`insert into app_users (id, client_id, project, secret_hash) values (gen_random_uuid(), ${app.id}, ${TestProject}, '\\x00'), (gen_random_uuid(), ${app.id}, ${TestProject}, '\\x00')`;
  t.equal((await svc.request('GET', `${p}/clients/${app.id}`, { token: owner })).body.appUsers, 2, 'how many app users the app has');
});

t.test('refuses bad input with a detail per field, and makes nothing', async (t) => {
  const before = (await svc.request('GET', `${p}/clients`, { token: owner })).body.clients.length;
  const cases: Array<[object, string[]]> = [
    [{ name: 'x' }, ['kind']],
    [{ kind: 'robot', name: 'x' }, ['kind']],
    [{ kind: 'app', name: '' }, ['name']],
    [{ kind: 'app', name: 'x'.repeat(101) }, ['name']],
    [{ kind: 'app', name: 'x', tokenLifetimeSeconds: 59 }, ['tokenLifetimeSeconds']],
    [{ kind: 'app', name: 'x', tokenLifetimeSeconds: 86401 }, ['tokenLifetimeSeconds']],
    [{ kind: 'app', name: 'x', tokenLifetimeSeconds: 1.5 }, ['tokenLifetimeSeconds']],
    [{ kind: 'app', name: 'x', permissions: ['ordersRead'] }, ['']],
    [{ kind: 'service', name: 'x' }, ['permissions']],
    [{ kind: 'service', name: 'x', permissions: [] }, ['permissions']],
    [{ kind: 'service', name: 'x', permissions: ['ordersRead', 'all'] }, ['permissions.1']],
    [{ kind: 'service', name: 'x', permissions: ['ordersRead', 'ordersRead'] }, ['permissions']],
    [{ kind: 'service', name: '', permissions: ['nope'], tokenLifetimeSeconds: 0 }, ['name', 'permissions.0', 'tokenLifetimeSeconds']],
  ];
  for (const [body, paths] of cases) {
    const res = await svc.request('POST', `${p}/clients`, { token: owner, body });
    t.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
    t.equal(res.body.type, 'bad_request');
    t.same([...new Set(res.body.details.map((d: { path: string }) => d.path))].sort(), paths.sort(), `details name ${paths.join(', ')}`);
  }
  t.equal((await svc.request('GET', `${p}/clients`, { token: owner })).body.clients.length, before, 'nothing was made');
  const rotateBad = await svc.request('POST', `${p}/clients/${app.id}/rotate`, { token: owner, body: { revokeOldNow: 'yes' } });
  t.equal(rotateBad.status, 400, 'a rotation with revokeOldNow that is no boolean');
});

t.test('an unknown id, a malformed one, and another project\'s client are not found; other tokens are refused', async (t) => {
  for (const path of [`${p}/clients/app-aaaaaaaaaaaaaaaaaaaa`, `${p}/clients/app-aaaaaaaaaaaaaaaaaaaa/rotate`]) {
    const res = await svc.request(path.endsWith('rotate') ? 'POST' : 'GET', path, { token: owner });
    t.equal(res.status, 404, `${path}: ${res.text}`);
    t.equal(res.body.type, 'not_found');
  }
  t.equal((await svc.request('GET', `${p}/clients/nonsense`, { token: owner })).status, 400, 'an id that is no client id');
  t.equal((await svc.request('DELETE', `${p}/clients/app-aaaaaaaaaaaaaaaaaaaa`, { token: owner })).status, 404);
  for (const method of ['GET', 'DELETE'] as const) {
    const res = await svc.request(method, `/other-proj01/clients/${app.id}`, { token: foreignOwner });
    t.equal(res.status, 404, `${method} through another project: not found`);
  }
  t.equal((await svc.request('POST', `/other-proj01/clients/${service.id}/rotate`, { token: foreignOwner })).status, 404, 'nor rotated through it');
  t.equal((await svc.request('GET', `${p}/clients`, { token: foreignOwner })).status, 403, "another project's token");
  t.equal((await svc.request('GET', `${p}/clients`, { token: await svc.token(['ordersRead', 'productsWrite']) })).status, 403, 'a token without projectsWrite');
  t.equal((await svc.request('GET', `${p}/clients/${app.id}`, { token: owner })).status, 200, 'still there');
});

t.test('rotating answers a new secret once with the time the one before is accepted until', async (t) => {
  const res = await svc.request('POST', `${p}/clients/${service.id}/rotate`, { token: owner });
  t.equal(res.status, 200, res.text);
  t.not(res.body.secret, service.secret, 'a new secret');
  t.equal(res.headers.get('cache-control'), 'no-store');
  t.ok(res.body.rotatedAt && res.body.previousSecretUntil, 'when, and until when the one before is accepted');
  const shown = await svc.request('GET', `${p}/clients/${service.id}`, { token: owner });
  t.equal(shown.body.previousSecretUntil, res.body.previousSecretUntil);
  t.equal(shown.body.secret, undefined);
});

t.test('the secrets are kept sealed (an app key) or as a SHA-256 (a service secret), never plain', async (t) => {
  const rows = await svc.sql<Array<{ id: string; secret: string; previous_secret: string | null }>>`select id, secret, previous_secret from clients where project = ${TestProject}`;
  const appRow = rows.find((r) => r.id === app.id)!;
  t.match(appRow.secret, /^sealed:v1:/, 'the app key is sealed');
  const serviceRow = rows.find((r) => r.id === service.id)!;
  t.match(serviceRow.secret, /^sha256:[A-Za-z0-9_-]{43}$/, 'the service secret is a hash');
  t.match(serviceRow.previous_secret, /^sha256:/, 'and so is the one before');
  const all = JSON.stringify(rows);
  t.notOk(all.includes(service.secret) || all.includes(app.secret.replace(/=+$/, '')), 'no secret in the table');
});

t.test('deleting a client ends it and its app users', async (t) => {
  const res = await svc.request('DELETE', `${p}/clients/${app.id}`, { token: owner });
  t.equal(res.status, 200, res.text);
  t.equal((await svc.request('GET', `${p}/clients/${app.id}`, { token: owner })).status, 404);
  t.same(await svc.sql`select id from app_users where client_id = ${app.id}`, [], 'its app users are gone');
  t.equal((await svc.request('DELETE', `${p}/clients/${app.id}`, { token: owner })).status, 404, 'a second delete finds nothing');
});

t.test('a project has at most 100 clients', async (t) => {
  const have = (await svc.request('GET', `${p}/clients`, { token: owner })).body.clients.length;
  await Promise.all(
    Array.from({ length: 100 - have }, (_, i) => svc.request('POST', `${p}/clients`, { token: owner, body: { kind: 'service', name: `S${i}`, permissions: ['shopsRead'] } })),
  );
  const over = await svc.request('POST', `${p}/clients`, { token: owner, body: { kind: 'app', name: 'one too many' } });
  t.equal(over.status, 400, over.text);
  t.match(over.body.details, [{ code: 'too_many', path: 'kind' }]);
  t.equal((await svc.request('GET', `${p}/clients`, { token: owner })).body.clients.length, 100);
  t.equal((await svc.request('POST', '/other-proj01/clients', { token: foreignOwner, body: { kind: 'app', name: 'theirs' } })).status, 201, "another project's count is its own");
});
