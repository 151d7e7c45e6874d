import { decodeJwt, jwtVerify } from 'jose';
import t, { type Test } from 'tap';
import type { HttpResponse } from './support/http.js';
import { startTestService, TestProject, TestSecret } from './support/service.js';

/**
 * OAuth 2.0 client credentials (RFC 6749 §4.4) at POST /oauth/token for the project's service
 * clients: both ways of authenticating the client, the scope within its permissions, the answers
 * and errors as RFC 6749 §5.1 and §5.2 write them, rotation, deletion, and what the token can do.
 */
const svc = await startTestService(t);
const p = `/${TestProject}`;
const owner = await svc.token(['projectsWrite']);
const Form = { 'content-type': 'application/x-www-form-urlencoded' };

const makeService = async (permissions: string[], name = 'ERP', body: object = {}, project = TestProject, token = owner) => {
  const res = await svc.request('POST', `/${project}/clients`, { token, body: { kind: 'service', name, permissions, ...body } });
  if (res.status !== 201) throw new Error(`client: ${res.status} ${res.text}`);
  return res.body as { id: string; secret: string; tokenLifetimeSeconds: number };
};
const erp = await makeService(['ordersRead', 'shopsRead', 'closingsRead'], 'ERP', { tokenLifetimeSeconds: 900 });

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const tokenRequest = (body: string, headers: Record<string, string> = {}) => svc.request('POST', '/oauth/token', { raw: body, headers: { ...Form, ...headers } });

function assertOAuthError(t: Test, res: HttpResponse, status: number, error: string, what: string): void {
  t.equal(res.status, status, `${what}: ${res.text}`);
  t.equal(res.body.error, error, `${what}: ${error}`);
  t.type(res.body.error_description, 'string', `${what}: with a description`);
  t.same(Object.keys(res.body).sort(), ['error', 'error_description'], `${what}: RFC 6749's error body and nothing else`);
  t.equal(res.headers.get('cache-control'), 'no-store', `${what}: not kept by caches`);
  if (status === 401) t.match(res.headers.get('www-authenticate'), /^Basic realm=/, `${what}: WWW-Authenticate names Basic`);
}

t.test('client_secret_basic: a token with all of the client\'s permissions that the API takes', async (t) => {
  const res = await tokenRequest(form({ grant_type: 'client_credentials' }), { authorization: basic(erp.id, erp.secret) });
  t.equal(res.status, 200, res.text);
  t.same(Object.keys(res.body).sort(), ['access_token', 'expires_in', 'scope', 'token_type']);
  t.match(res.body, { token_type: 'Bearer', expires_in: 900, scope: 'ordersRead shopsRead closingsRead' });
  t.equal(res.headers.get('cache-control'), 'no-store', 'RFC 6749 §5.1: no-store');
  t.equal(res.headers.get('pragma'), 'no-cache', 'and Pragma: no-cache');
  const { payload } = await jwtVerify(res.body.access_token, new TextEncoder().encode(TestSecret), { issuer: 'checkout-platform', audience: 'checkout-platform' });
  t.match(payload, { project: TestProject, sub: `client:${erp.id}`, permissions: ['ordersRead', 'shopsRead', 'closingsRead'] });
  t.type(payload.jti, 'string', 'a jti');
  t.equal(payload.exp! - payload.iat!, 900, "it lives the client's token lifetime");
  t.equal(payload.appUserID, undefined, 'no app user');
  t.equal((await svc.request('GET', `${p}/orders`, { token: res.body.access_token })).status, 200, 'reads orders');
  t.equal((await svc.request('POST', `${p}/shops`, { token: res.body.access_token, body: { name: 'x' } })).status, 403, 'writes no shop: it lacks shopsWrite');
  t.equal((await svc.request('GET', '/other-proj01/orders', { token: res.body.access_token })).status, 403, "reads nothing of another project");
});

t.test('client_secret_post, and a scope within the client\'s permissions', async (t) => {
  const res = await tokenRequest(form({ grant_type: 'client_credentials', client_id: erp.id, client_secret: erp.secret, scope: 'shopsRead ordersRead' }));
  t.equal(res.status, 200, res.text);
  t.equal(res.body.scope, 'shopsRead ordersRead', 'the scope asked for');
  t.same(decodeJwt(res.body.access_token).permissions, ['shopsRead', 'ordersRead'], 'and no more');
  t.equal((await svc.request('GET', `${p}/closings`, { token: res.body.access_token })).status, 403, 'a permission left out of the scope is not in the token');
  const twice = await tokenRequest(form({ grant_type: 'client_credentials', scope: '  shopsRead  shopsRead ' }), { authorization: basic(erp.id, erp.secret) });
  t.equal(twice.body.scope, 'shopsRead', 'a scope named twice counts once; spaces around do not matter');
});

t.test('a scope outside the client\'s permissions is invalid_scope, and no token', async (t) => {
  const many = Array.from({ length: 300 }, (_, i) => `p${i}`).join(' ');
  for (const scope of ['ordersRead productsWrite', 'projectsWrite', 'everything', 'ordersRead,shopsRead', many]) {
    assertOAuthError(t, await tokenRequest(form({ grant_type: 'client_credentials', scope }), { authorization: basic(erp.id, erp.secret) }), 400, 'invalid_scope', `scope "${scope.slice(0, 40)}"`);
  }
  assertOAuthError(t, await tokenRequest(form({ grant_type: 'client_credentials', scope: 'x'.repeat(2001) }), { authorization: basic(erp.id, erp.secret) }), 400, 'invalid_request', 'a scope longer than 2000 characters');
});

t.test('grant types other than client_credentials are unsupported_grant_type; a request without one or with a parameter twice is invalid_request', async (t) => {
  for (const grant of ['password', 'authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:jwt-bearer', 'CLIENT_CREDENTIALS']) {
    assertOAuthError(t, await tokenRequest(form({ grant_type: grant }), { authorization: basic(erp.id, erp.secret) }), 400, 'unsupported_grant_type', grant);
  }
  assertOAuthError(t, await tokenRequest(form({}), { authorization: basic(erp.id, erp.secret) }), 400, 'invalid_request', 'no grant_type');
  assertOAuthError(t, await tokenRequest('grant_type=client_credentials&grant_type=client_credentials', { authorization: basic(erp.id, erp.secret) }), 400, 'invalid_request', 'grant_type twice');
  assertOAuthError(
    t,
    await tokenRequest(form({ grant_type: 'client_credentials', client_id: erp.id, client_secret: erp.secret }), { authorization: basic(erp.id, erp.secret) }),
    400,
    'invalid_request',
    'Basic and the form at once',
  );
  const text = await svc.request('POST', '/oauth/token', { raw: 'grant_type=client_credentials', headers: { 'content-type': 'text/plain', authorization: basic(erp.id, erp.secret) } });
  assertOAuthError(t, text, 415, 'invalid_request', 'a body that is no form');
  assertOAuthError(t, await tokenRequest('x'.repeat(9000), { authorization: basic(erp.id, erp.secret) }), 413, 'invalid_request', 'a form too large');
});

t.test('a client that does not authenticate is invalid_client (401, WWW-Authenticate): wrong secret, unknown, an app, another scheme, none', async (t) => {
  const app = await svc.request('POST', `${p}/clients`, { token: owner, body: { kind: 'app', name: 'App' } });
  const grant = form({ grant_type: 'client_credentials' });
  const cases: Array<[string, Record<string, string>, string?]> = [
    ['a wrong secret', { authorization: basic(erp.id, `${erp.secret}x`) }],
    ['an unknown client', { authorization: basic('svc-aaaaaaaaaaaaaaaaaaaa', erp.secret) }],
    ['an app with its key as the secret', { authorization: basic(app.body.id, app.body.secret) }],
    ['a bearer token', { authorization: `Bearer ${owner}` }],
    ['Basic without a colon', { authorization: `Basic ${Buffer.from(erp.id).toString('base64')}` }],
    ['no authentication', {}],
    ['a client id longer than any', { authorization: basic(`${erp.id}${'x'.repeat(300)}`, erp.secret) }],
    ['a secret longer than any', { authorization: basic(erp.id, 'x'.repeat(1000)) }],
    ['the id in the form without a secret', {}, form({ grant_type: 'client_credentials', client_id: erp.id })],
  ];
  for (const [what, headers, body] of cases) assertOAuthError(t, await tokenRequest(body ?? grant, headers), 401, 'invalid_client', what);
});

t.test('a rotated secret works beside the new one for 24 hours, then not; revokeOldNow ends it at once; a deleted client gets no token', async (t) => {
  const rotating = await makeService(['shopsRead'], 'Rotating');
  const grant = form({ grant_type: 'client_credentials' });
  const rotated = await svc.request('POST', `${p}/clients/${rotating.id}/rotate`, { token: owner, body: {} });
  t.equal(rotated.status, 200, rotated.text);
  t.equal((await tokenRequest(grant, { authorization: basic(rotating.id, rotating.secret) })).status, 200, 'the secret before, within its grace');
  t.equal((await tokenRequest(grant, { authorization: basic(rotating.id, rotated.body.secret) })).status, 200, 'the new secret');
  await svc.sql`update clients set previous_secret_until = now() - interval '1 second' where id = ${rotating.id}`;
  assertOAuthError(t, await tokenRequest(grant, { authorization: basic(rotating.id, rotating.secret) }), 401, 'invalid_client', 'the secret before, past its grace');

  const again = await svc.request('POST', `${p}/clients/${rotating.id}/rotate`, { token: owner, body: { revokeOldNow: true } });
  assertOAuthError(t, await tokenRequest(grant, { authorization: basic(rotating.id, rotated.body.secret) }), 401, 'invalid_client', 'the secret before, revoked at once');
  const issued = await tokenRequest(grant, { authorization: basic(rotating.id, again.body.secret) });
  t.equal(issued.status, 200, 'the newest secret');

  t.equal((await svc.request('DELETE', `${p}/clients/${rotating.id}`, { token: owner })).status, 200);
  assertOAuthError(t, await tokenRequest(grant, { authorization: basic(rotating.id, again.body.secret) }), 401, 'invalid_client', 'a deleted client');
  t.equal((await svc.request('GET', `${p}/shops`, { token: issued.body.access_token })).status, 200, 'a token issued before lives until it expires');
});

t.test("/openapi.json describes client credentials as an OAuth2 scheme that /docs can use, on every operation with its permissions as scopes", async (t) => {
  const doc = (await svc.request('GET', '/openapi.json')).body;
  const scheme = doc.components.securitySchemes.oauth2;
  t.equal(scheme.type, 'oauth2');
  t.equal(scheme.flows.clientCredentials.tokenUrl, '/oauth/token');
  t.ok(scheme.flows.clientCredentials.scopes.ordersRead, 'the permission names are its scopes');
  t.same(doc.paths['/{project}/orders'].get.security, [{ bearerAuth: [] }, { oauth2: ['ordersRead'] }], 'an operation names its permission as the scope');
  const token = doc.paths['/oauth/token'].post;
  t.ok(token.requestBody.content['application/x-www-form-urlencoded'], 'the token endpoint takes a form');
  t.same(token.security, [{ clientBasicAuth: [] }, {}], 'Basic, or the credentials in the form');
  t.ok(doc.paths['/{project}/tokens'].get.security.some((s: object) => 'appBasicAuth' in s), "the app SDKs' token path names their Basic credentials");
});
