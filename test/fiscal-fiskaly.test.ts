import { verify } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { finishPayment, p, seedCheckout } from './support/checkout.js';
import { signedMessage, startFiskalyStandIn } from './support/fiskaly-stand-in.js';
import { fiscalizedOrder as fiscalizedOrderOf, posSaleOfOneWater } from './support/fiscal.js';
import { startTestService } from './support/service.js';

/**
 * Fiscalization with the fiskaly provider, over HTTP, against a real stand-in of the SIGN DE v2 API
 * (test/support/fiskaly-stand-in.ts: an HTTP server signing with a real ECDSA key): the service is
 * configured as a retailer would (PUT /settings), sells through the app, the payment system and a
 * PoS, and the stand-in is made to expire tokens, answer 503, lose an answer it applied (a worker
 * that died between the TSE's answer and its ack) or be unreachable past the retry window.
 */
const fiskaly = await startFiskalyStandIn(t, { tokenLifetimeSeconds: 300 });
const logLines: string[] = [];
const svc = await startTestService(t, {
  env: { FISCAL_RETRY_SCHEDULE_MS: '200', FISCAL_MAX_ATTEMPTS: '4', FISCAL_TIMEOUT_MS: '2000' },
  logLines: (line) => logLines.push(line),
});
const fx = await seedCheckout(svc);
const admin = await svc.token(['projectsWrite']);
const { orders: ordersToken, pricing } = fx.tokens;

const settings = await svc.request('PUT', `${p}/settings`, {
  token: admin,
  body: {
    currency: 'EUR',
    taxRates: { normal: '19', reduced: '7' },
    paymentMethods: ['cash', 'girocard'],
    fiscalization: { provider: 'fiskaly', tssId: fiskaly.tssId, apiKey: fiskaly.apiKey, apiSecret: fiskaly.apiSecret, adminPin: fiskaly.adminPin, baseUrl: fiskaly.url },
  },
});
if (settings.status !== 200) throw new Error(`settings: ${settings.status} ${settings.text}`);

const cart = [
  { sku: 'WATER', amount: 2 },
  { sku: 'BREAD', amount: 1 },
];

async function created(): Promise<string> {
  const res = await fx.createProcess({ items: cart });
  if (res.status !== 201) throw new Error(`checkout process failed: ${res.status} ${res.text}`);
  return res.body.id;
}

const fiscalizedOrder = (id: string, timeoutMs = 20_000) => fiscalizedOrderOf(svc, ordersToken, id, timeoutMs);

/** The finish's signature, checked with the stand-in TSS's public key over what it signs. */
function finishVerifies(reference: any): boolean {
  const finish = reference.logs[1];
  const message = signedMessage({ ...finish, clientSerialNumber: reference.clientSerialNumber, transactionNumber: reference.transactionNumber });
  return verify('sha256', Buffer.from(message), { key: fiskaly.publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(finish.signature, 'base64'));
}

/** The stand-in's requests that would finish the transaction (it matches on the path; the start is recorded before a test uses it). */
const finishOf = (id: string) => (method: string, path: string) => method === 'PUT' && path.endsWith(`/tx/${id}`);

t.test('settings name the TSE and never answer its secrets', async (t) => {
  const read = await svc.request('GET', `${p}/settings`, { token: admin });
  t.match(read.body.fiscalization, { provider: 'fiskaly', tssId: fiskaly.tssId, baseUrl: fiskaly.url, apiKeySet: true, apiSecretSet: true, adminPinSet: true });
  t.notOk(read.text.includes(fiskaly.apiSecret) || read.text.includes(fiskaly.apiKey) || read.text.includes(fiskaly.adminPin), 'no secret in the answer');
});

t.test('an app sale paid by the payment system is signed by fiskaly: the order carries the TSS, its transaction and both logs', async (t) => {
  const id = await created();
  await finishPayment(svc, fx, id, 'successful');
  const order = await fiscalizedOrder(id);
  const ref = order.fiscalReference;
  t.equal(order.state, 'final');
  t.match(ref.securityDeviceModule, { signatureAlgorithm: 'ecdsa-plain-SHA256', logTimeFormat: 'unixTime' });
  t.equal(ref.clientSerialNumber, 's1', 'the TSE client of the shop');
  t.match(ref.logs, [{ processType: '' }, { processType: 'Kassenbeleg-V1', processData: 'Beleg^1.98_2.49_0.00_0.00_0.00^4.47:Bar' }]);
  t.ok(finishVerifies(ref), "the finish's signature verifies with the TSS's public key");
  t.equal(fiskaly.signedRevisions(id), 2, 'the transaction was started and finished, each once');
  t.equal(fiskaly.revisionState(id, 2), 'FINISHED');
  t.equal(fiskaly.calls.filter((c) => c.method === 'PUT' && c.path.includes('/client/') && c.status < 300).length, 1, 'the shop became a TSE client once');
});

t.test('a PoS sale and an aborted process are signed too, the abort as a cancelled transaction', async (t) => {
  const pos = await created();
  const done = await posSaleOfOneWater(svc, pricing, pos);
  t.equal(done.status, 200, done.text);
  t.equal((await fiscalizedOrder(pos)).fiscalReference.logs[1].processData, 'Beleg^0.99_0.00_0.00_0.00_0.00^0.99:Bar');

  const aborted = await created();
  await finishPayment(svc, fx, aborted, 'aborted');
  const order = await fiscalizedOrder(aborted);
  t.equal(order.state, 'userAborted');
  t.match(order.fiscalReference.logs[1], { processType: 'Kassenbeleg-V1', processData: /^AVBelegabbruch\^/ });
  t.equal(fiskaly.revisionState(aborted, 2), 'CANCELLED');
});

t.test('an expired token is renewed once (401, one POST /auth) and the sale is signed', async (t) => {
  const id = await created();
  await fiscalizedOrderStart(id);
  const authsBefore = fiskaly.count('POST', '/auth');
  fiskaly.expireTokens();
  await finishPayment(svc, fx, id, 'successful');
  const order = await fiscalizedOrder(id);
  t.notOk(order.fiscalReference.logs[1].error, 'signed');
  t.equal(fiskaly.count('POST', '/auth') - authsBefore, 1, 'exactly one new sign-in');
});

t.test("a payment while the start is still on its way: the finish waits for the start's answer instead of asking for it again", async (t) => {
  fiskaly.delayMs = 400;
  try {
    const id = await created();
    // Paid at once: the finish job arrives while the start's call is still waiting for the TSE.
    await finishPayment(svc, fx, id, 'successful');
    const order = await fiscalizedOrder(id);
    t.notOk(order.fiscalReference.logs[1].error, 'signed');
    t.equal(fiskaly.revisionCalls(id, 1), 1, 'revision 1 asked for once');
    t.equal(fiskaly.revisionCalls(id, 2), 1, 'revision 2 asked for once');
    t.equal(fiskaly.signedRevisions(id), 2);
  } finally {
    fiskaly.delayMs = 0;
  }
});

t.test('503s, then success: one transaction revision in effect, signed once', async (t) => {
  const id = await created();
  await fiscalizedOrderStart(id);
  fiskaly.failNext(2, { status: 503, retryAfterSeconds: 0, match: finishOf(id) });
  await finishPayment(svc, fx, id, 'successful');
  const order = await fiscalizedOrder(id);
  t.notOk(order.fiscalReference.logs[1].error);
  t.ok(fiskaly.revisionCalls(id, 2) >= 3, `the finish was tried again (${fiskaly.revisionCalls(id, 2)} calls)`);
  t.equal(fiskaly.signedRevisions(id), 2, 'each revision signed once');
});

t.test('a worker that died between the TSE signing and recording it: the retry gets the same signature, no counter skipped', async (t) => {
  const id = await created();
  await fiscalizedOrderStart(id);
  const counterBefore = fiskaly.signatureCounter();
  fiskaly.failNext(1, { status: 503, retryAfterSeconds: 0, afterApplying: true, match: finishOf(id) });
  await finishPayment(svc, fx, id, 'successful');
  const order = await fiscalizedOrder(id);
  t.equal(fiskaly.signedRevisions(id), 2, 'one finished transaction');
  t.equal(order.fiscalReference.logs[1].counter, counterBefore + 1, 'the signature of the lost answer, not a second one');
  t.equal(fiskaly.signatureCounter(), counterBefore + 1, 'the TSE signed once');
  t.ok(finishVerifies(order.fiscalReference));
});

t.test('a TSE unreachable past the retry window: the order is final with TSE-Ausfall, operators are told, and the next sale is signed', async (t) => {
  const id = await created();
  await fiscalizedOrderStart(id);
  fiskaly.failNext(1000, { status: 503, retryAfterSeconds: 0, match: finishOf(id) });
  await finishPayment(svc, fx, id, 'successful');
  const order = await fiscalizedOrder(id);
  t.equal(order.state, 'final', 'the sale stands');
  t.match(order.fiscalReference.logs[1].error, /^TSE-Ausfall: /);
  t.ok(logLines.some((l) => l.includes('"level":50') && l.includes(id)), 'an error-level line names the sale');

  const next = await created();
  await finishPayment(svc, fx, next, 'successful');
  t.notOk((await fiscalizedOrder(next)).fiscalReference.logs[1].error, 'a TSE that answers signs the next sale');
});

t.test('no secret reaches a log line', async (t) => {
  const secrets = [fiskaly.apiSecret, fiskaly.adminPin, ...fiskaly.issuedTokens()];
  t.same(logLines.filter((l) => secrets.some((s) => l.includes(s))), []);
});

/** Waits until the TSE has the transaction's start (revision 1), so a test's knobs act on its finish. */
async function fiscalizedOrderStart(id: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (fiskaly.revisionState(id, 1) === undefined) {
    if (Date.now() > deadline) throw new Error(`the transaction of ${id} was not started`);
    await sleep(20);
  }
}
