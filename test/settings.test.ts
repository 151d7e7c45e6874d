import t from 'tap';
import { startTestService, TestProject } from './support/service.js';

const svc = await startTestService(t);
const path = `/${TestProject}/settings`;
const admin = await svc.token(['projectsWrite']);
const anyone = await svc.token([]);

t.test('answers the defaults of design.md before any settings were written', async (t) => {
  const res = await svc.request('GET', path, { token: anyone });
  t.equal(res.status, 200);
  t.same(res.body, {
    project: TestProject,
    currency: 'EUR',
    taxRates: { normal: '19', reduced: '7' },
    paymentMethods: ['cash'],
    locale: 'de-DE',
    companyName: '',
    taxNumber: '',
    vatID: '',
    companyAdress: { street: '', zip: '', city: '', country: '' },
  });
});

t.test('replaces the settings with PUT and reads them back', async (t) => {
  const next = {
    currency: 'CHF',
    taxRates: { normal: '8.1', reduced: '2.6', zero: '0' },
    paymentMethods: ['cash', 'girocard', 'sepa'],
    locale: 'de-CH',
    companyName: 'Acme Handels AG',
    taxNumber: '143/123/45678',
    vatID: 'CHE-123.456.789',
    companyAdress: { street: 'Bahnhofstrasse 1', zip: '8001', city: 'Zürich', country: 'CH' },
  };
  const res = await svc.request('PUT', path, { token: admin, body: next });
  t.equal(res.status, 200);
  t.same(res.body, { project: TestProject, ...next });
  t.same((await svc.request('GET', path, { token: anyone })).body, { project: TestProject, ...next });
});

t.test('keeps the settings of each project apart', async (t) => {
  const other = await svc.token([], { project: 'other-project' });
  t.equal((await svc.request('GET', '/other-project/settings', { token: other })).body.currency, 'EUR');
});

t.test('validates settings and keeps the stored ones on a refusal', async (t) => {
  const before = (await svc.request('GET', path, { token: anyone })).body;
  const res = await svc.request('PUT', path, {
    token: admin,
    body: { currency: 'euro', taxRates: { normal: '19%', reduced: '-7' }, paymentMethods: ['cash', 'cash', 'bad id'], locale: 'not a locale!' },
  });
  t.equal(res.status, 400);
  t.equal(res.body.type, 'bad_request');
  t.same(res.body.details.map((d: { path: string }) => d.path).sort(), ['currency', 'locale', 'paymentMethods', 'paymentMethods.2', 'taxRates.normal', 'taxRates.reduced']);
  t.same((await svc.request('GET', path, { token: anyone })).body, before);

  const empty = await svc.request('PUT', path, { token: admin, body: { currency: 'EUR', taxRates: {}, paymentMethods: [] } });
  t.equal(empty.status, 400, 'at least one tax category');
  const missing = await svc.request('PUT', path, { token: admin, body: { currency: 'EUR' } });
  t.equal(missing.status, 400, 'PUT replaces all settings, so all are required');
});

t.test('needs projectsWrite to change the settings', async (t) => {
  const before = (await svc.request('GET', path, { token: anyone })).body;
  const res = await svc.request('PUT', path, { token: anyone, body: { currency: 'USD', taxRates: { normal: '0' }, paymentMethods: [] } });
  t.equal(res.status, 403);
  t.equal(res.body.type, 'forbidden');
  t.same((await svc.request('GET', path, { token: anyone })).body, before);
  t.equal((await svc.request('GET', path)).status, 403, 'reading needs a token of the project');
});
