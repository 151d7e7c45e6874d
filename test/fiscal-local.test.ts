import { createHash, generateKeyPairSync, verify } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstream } from '@nats-io/jetstream';
import t from 'tap';
import type { TseProvider } from '../actors/fiscal/provider.js';
import { createLocalProvider, uncompressedPoint } from '../actors/fiscal/providers/local.js';
import { fiscalAmount, receiptProcessData, transferProcessData } from '../src/domain/fiscal/process-data.js';
import { fiscalJob } from '../subjects/fiscal.js';
import { finishPayment, p, seedCheckout, watchEvents } from './support/checkout.js';
import { closingTokens, closingWithLogs, downloadLog, runJob } from './support/closing.js';
import { validateDsfinvk } from './support/dsfinvk-validator.js';
import { fiscalizedOrder as fiscalizedOrderOf, pointPublicKey, posSaleOfOneWater } from './support/fiscal.js';
import { startTestService, TestProject, TestSecretsKey } from './support/service.js';
import { openFiscalSecrets } from '../actors/settings/secrets.js';
import { createKeyRing, parseKey } from '../src/secrets/key-ring.js';

const testKeyRing = createKeyRing(parseKey(TestSecretsKey));

/**
 * Fiscalization with the local signer, over HTTP: every sale's TSE transaction starts with its
 * process and finishes with it (jobs), the order carries the fiscalReference, each signature
 * verifies with the TSE's public key by the message format docs/fiscalization.md documents, and counters
 * never repeat or skip. A wrapper around the providers (passed through the service's options, as
 * a fiskaly provider would be) makes the TSE unreachable or "crash" a worker after its answer.
 */
const unreachable = { on: false };
/** Transactions whose worker dies once right after the TSE answered their finish (before recording it). */
const crashAfterFinish = new Set<string>();
const wrap = (provider: TseProvider): TseProvider => ({
  name: provider.name,
  ...(provider.keepsStarts ? { keepsStarts: true } : {}),
  start: async (tx) => (unreachable.on ? { kind: 'retry', reason: 'connect ECONNREFUSED (test)' } : provider.start(tx)),
  finish: async (request) => {
    if (unreachable.on) return { kind: 'retry', reason: 'connect ECONNREFUSED (test)' };
    const answer = await provider.finish(request);
    if (crashAfterFinish.delete(request.transactionId)) throw new Error('worker died after the TSE answered (test)');
    return answer;
  },
});

const logLines: string[] = [];
const svc = await startTestService(t, {
  env: { FISCAL_RETRY_SCHEDULE_MS: '200', FISCAL_MAX_ATTEMPTS: '4' },
  logLines: (line) => logLines.push(line),
  start: { fiscal: { wrap } },
});
const fx = await seedCheckout(svc);
const events = await watchEvents(t, svc);
const admin = await svc.token(['projectsWrite']);
const { orders: ordersToken, pricing } = fx.tokens;

/** 2 × WATER (0.99, 19 %) and 1 × BREAD (2.49, 7 %): 1.98 at A, 2.49 at B, 4.47 in all. */
const cart = [
  { sku: 'WATER', amount: 2 },
  { sku: 'BREAD', amount: 1 },
];
const BaseSettings = { currency: 'EUR', taxRates: { normal: '19', reduced: '7' }, paymentMethods: ['cash', 'girocard'] };

async function created(options: { paymentMethod?: string } = {}): Promise<string> {
  const res = await fx.createProcess({ items: cart, ...options });
  if (res.status !== 201) throw new Error(`checkout process failed: ${res.status} ${res.text}`);
  return res.body.id;
}

const fiscalizedOrder = (id: string, timeoutMs = 15_000) => fiscalizedOrderOf(svc, ordersToken, id, timeoutMs);

/** Whether a log entry's signature verifies with the TSE's public key, over the documented message. */
function verifies(reference: any, log: any): boolean {
  const key = pointPublicKey(reference.securityDeviceModule.publicKey);
  const message = ['local-v1', log.counter, log.timestamp, log.processType, log.processData, reference.transactionNumber].join(';');
  return verify('sha256', Buffer.from(message, 'utf8'), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(log.signature, 'base64'));
}

// First, so the TSS's counters start here: 50 sales make signatures 1..100.
t.test('50 concurrent sales of one shop are signed with counters 1..100 and transaction numbers 1..50, each once, every signature valid', async (t) => {
  const ids = await Promise.all(Array.from({ length: 50 }, () => created()));
  await Promise.all(ids.map((id) => finishPayment(svc, fx, id, 'successful')));
  const orders = await Promise.all(ids.map((id) => fiscalizedOrder(id, 30_000)));
  const counters = orders.flatMap((o) => o.fiscalReference.logs.map((l: any) => l.counter)).sort((a, b) => a - b);
  t.same(counters, Array.from({ length: 100 }, (_, i) => i + 1), 'signature counters 1..100: no gap, no repeat');
  const numbers = orders.map((o) => o.fiscalReference.transactionNumber).sort((a, b) => a - b);
  t.same(numbers, Array.from({ length: 50 }, (_, i) => i + 1), 'transaction numbers 1..50');
  const invalid = orders.flatMap((o) => o.fiscalReference.logs.filter((l: any) => !verifies(o.fiscalReference, l)).map(() => o.id));
  t.same(invalid, [], 'every signature verifies with the public key');
  for (const o of orders) {
    const [start, finish] = o.fiscalReference.logs;
    if (!(start.counter < finish.counter)) t.fail(`order ${o.id}: its start is signed before its finish`);
  }
});

t.test('an app sale paid by the payment system carries its start and finish logs, the Beleg processData and a fiscalized event', async (t) => {
  const id = await created();
  await finishPayment(svc, fx, id, 'successful');
  const order = await fiscalizedOrder(id);
  const ref = order.fiscalReference;
  const device = ref.securityDeviceModule;
  t.equal(device.signatureAlgorithm, 'ecdsa-plain-SHA256');
  t.equal(device.logTimeFormat, 'unixTime');
  t.equal(device.serialNumber, createHash('sha256').update(Buffer.from(device.publicKey, 'base64')).digest('hex'), 'serial = SHA-256 of the public key (the uncompressed point)');
  t.equal(Buffer.from(device.publicKey, 'base64').length, 65, 'the public key is the 65-byte uncompressed point');
  t.match(device.certificate, /NOT CERTIFIED/, 'the certificate says plainly it is not certified');
  t.equal(ref.clientSerialNumber, 's1', 'the cash register is the shop');
  t.equal(ref.transactionNumber, 51);
  t.match(ref.logs, [
    { counter: 101, processType: '', processData: '' },
    { counter: 102, processType: 'Kassenbeleg-V1', processData: 'Beleg^1.98_2.49_0.00_0.00_0.00^4.47:Bar' },
  ]);
  t.ok(ref.logs.every((l: any) => /^\d{10}$/.test(l.timestamp) && !l.error), 'unixTime timestamps, no error');
  t.ok(ref.logs.every((l: any) => verifies(ref, l)), 'both signatures verify');

  const list = await svc.request('GET', `${p}/orders?includeAllStates=true&perPage=1000`, { token: ordersToken });
  t.same(list.body.resources.find((o: any) => o.id === id)?.fiscalReference, ref, 'the order list shows it too');
  const [stored] = await svc.sql`select doc::text like '%fiscalReference%' as in_document from orders where project = ${TestProject} and id = ${id}`;
  t.equal(stored?.in_document, false, 'signing did not rewrite the order: its reference is kept with the TSE transaction');

  await events.settle();
  const fiscalized = events.of(id).filter((e) => e.domain === 'order' && e.event === 'fiscalized');
  t.equal(fiscalized.length, 1, 'one fiscalized event');
  t.same(fiscalized[0]?.payload.fiscalReference, ref, 'carrying the reference');
  t.match(fiscalized[0]?.payload.order, { id, state: 'final', shopID: 's1', paidAmount: 447 });
  for (const e of events.of(id)) {
    t.equal(e.text, JSON.stringify(e.payload), `${e.domain}.${e.event} comes in the one byte form of every event (JSON.stringify's: no " : " nor ": ")`);
  }

  const receipt = await fetch(`${svc.url}${p}/orders/${id}/receipt`, { headers: { authorization: `Bearer ${ordersToken}` } });
  t.equal(receipt.status, 200, 'the receipt is made once the signature is there');
});

t.test('a card payment is Unbar', async (t) => {
  const id = await created({ paymentMethod: 'girocard' });
  await finishPayment(svc, fx, id, 'successful');
  const order = await fiscalizedOrder(id);
  t.equal(order.fiscalReference.logs[1].processData, 'Beleg^1.98_2.49_0.00_0.00_0.00^4.47:Unbar');
});

t.test('an order whose reference a worker before migration 0021 wrote into its document reads the same (rolling upgrade)', async (t) => {
  const id = await created();
  await finishPayment(svc, fx, id, 'successful');
  const { fiscalReference } = await fiscalizedOrder(id);
  // What the version before did when it recorded a finish: the reference into the document, the flag cleared.
  await svc.sql`
    update orders set doc = (left(doc::text, -1) || ',"fiscalReference":' || ${JSON.stringify(fiscalReference)}::text || '}')::json, fiscal_pending = false
    where project = ${TestProject} and id = ${id}`;
  await svc.sql`delete from receipts where project = ${TestProject} and order_id = ${id}`;
  const order = await svc.request('GET', `${p}/orders/${id}`, { token: ordersToken });
  t.same(order.body.fiscalReference, fiscalReference, 'the reference, once, from the document');
  t.equal(order.text.split('"fiscalReference"').length, 2, 'not added a second time');
  const receipt = await fetch(`${svc.url}${p}/orders/${id}/receipt`, { headers: { authorization: `Bearer ${ordersToken}` } });
  t.equal(receipt.status, 200, 'the receipt does not wait for a reference it has');
});

t.test('a sale a PoS takes over and finishes is signed with the PoS figures', async (t) => {
  const id = await created();
  const done = await posSaleOfOneWater(svc, pricing, id);
  t.equal(done.status, 200, done.text);
  const order = await fiscalizedOrder(id);
  t.equal(order.fiscalReference.logs[1].processData, 'Beleg^0.99_0.00_0.00_0.00_0.00^0.99:Bar');
  t.ok(order.fiscalReference.logs.every((l: any) => verifies(order.fiscalReference, l)));
});

t.test('an aborted and a failed process finish their transactions as abort receipts', async (t) => {
  const aborted = await created();
  await finishPayment(svc, fx, aborted, 'aborted');
  const failed = await created();
  await finishPayment(svc, fx, failed, 'failed');
  for (const [id, state] of [
    [aborted, 'userAborted'],
    [failed, 'paymentFailed'],
  ] as const) {
    const order = await fiscalizedOrder(id);
    t.equal(order.state, state);
    t.match(order.fiscalReference.logs, [{ processType: '' }, { processType: 'Kassenbeleg-V1', processData: 'AVBelegabbruch^0.00_0.00_0.00_0.00_0.00^' }]);
    t.ok(order.fiscalReference.logs.every((l: any) => verifies(order.fiscalReference, l)), `${state}: signatures verify`);
  }
});

t.test('a process handed to another till (transferred) finishes its transaction as an AVTransfer of its cart, without payment', async (t) => {
  const id = await created();
  for (const paymentState of ['processing', 'transferred']) {
    const res = await svc.request('PATCH', `${p}/checkout/process/${id}`, { token: fx.tokens.payment, body: { paymentState } });
    t.equal(res.status, 200, `${paymentState}: ${res.text}`);
  }
  let finish: any;
  for (const started = Date.now(); !finish && Date.now() - started < 15_000; await sleep(100)) {
    [finish] = await svc.sql`select finish_log, transaction_number::int, device from fiscal_transactions where project = ${TestProject} and process_id = ${id} and finish_log is not null`;
  }
  t.ok(finish, 'the transaction is finished');
  t.match(finish.finish_log, { processType: 'Kassenbeleg-V1', processData: /^AVTransfer\^\d+\.\d{2}_\d+\.\d{2}_0\.00_0\.00_0\.00\^$/ });
  t.ok(verifies({ securityDeviceModule: finish.device, transactionNumber: finish.transaction_number }, finish.finish_log), 'its signature verifies');
  t.equal((await svc.request('GET', `${p}/orders/${id}`, { token: ordersToken })).status, 404, 'and there is no order of it');
});

t.test('a worker that dies between the TSE answer and its ack, and a job delivered twice, leave one finished transaction and no skipped counter', async (t) => {
  const id = await created();
  crashAfterFinish.add(id);
  await finishPayment(svc, fx, id, 'successful');
  const order = await fiscalizedOrder(id);
  t.notOk(crashAfterFinish.has(id), 'the first attempt died after the answer');
  const before = order.fiscalReference;
  // The same jobs again, as a relay that published twice outside the duplicate window would.
  const js = jetstream(svc.nc);
  for (const step of ['start', 'finish'] as const) {
    const job = fiscalJob({ project: TestProject, processID: id, shopID: 's1', step, processType: 'Kassenbeleg-V1', processData: before.logs[1].processData, final: true });
    await js.publish(job.subject, JSON.stringify(job.payload), { msgID: `${job.msgId}:again` });
  }
  await sleep(1500);
  t.same((await fiscalizedOrder(id)).fiscalReference, before, 'the order carries the first answer, unchanged');
  const [row] = await svc.sql<{ n: number }[]>`select count(*)::int as n from fiscal_local_logs where project = ${TestProject} and transaction_id = ${id}`;
  t.equal(row!.n, 2, 'one start and one finish signed');
  const [tss] = await svc.sql<{ counter: number; logs: number; max: number }[]>`
    select t.signature_counter::int as counter, (select count(*)::int from fiscal_local_logs l where l.project = t.project) as logs,
           (select max(counter)::int from fiscal_local_logs l where l.project = t.project) as max
    from fiscal_local_tss t where t.project = ${TestProject}`;
  t.equal(tss!.counter, tss!.logs, 'the counter counts the signed logs: none skipped');
  t.equal(tss!.max, tss!.logs, 'and the highest counter is their number');
  await events.settle();
  t.equal(events.of(id).filter((e) => e.event === 'fiscalized').length, 1, 'one fiscalized event');
});

t.test('a TSE unreachable past the retry window never stops the sale: the order records TSE-Ausfall, an event and an error log line tell it', async (t) => {
  unreachable.on = true;
  const id = await created();
  await finishPayment(svc, fx, id, 'successful');
  await sleep(200);
  t.same(await svc.sql`select from receipts where order_id = ${id}`, [], 'no receipt while the signature is awaited');
  const order = await fiscalizedOrder(id);
  unreachable.on = false;
  t.equal(order.state, 'final', 'the sale stands');
  const finish = order.fiscalReference.logs.at(-1);
  t.match(finish, { processType: 'Kassenbeleg-V1', processData: 'Beleg^1.98_2.49_0.00_0.00_0.00^4.47:Bar', error: /^TSE-Ausfall: connect ECONNREFUSED/ });
  t.notOk(finish.signature, 'nothing signed');
  await events.settle();
  t.match(events.of(id).find((e) => e.event === 'fiscalized')?.payload.fiscalReference.logs.at(-1), { error: /^TSE-Ausfall/ }, 'the event says so');
  t.ok(logLines.some((l) => /"level":50/.test(l) && l.includes('sale recorded without a TSE signature') && l.includes(id)), 'an error-level log line says so');
  const receipt = await fetch(`${svc.url}${p}/orders/${id}/receipt`, { headers: { authorization: `Bearer ${ordersToken}` } });
  t.equal(receipt.status, 200, 'the receipt is made with the outage recorded');

  const next = await created();
  await finishPayment(svc, fx, next, 'successful');
  const signed = await fiscalizedOrder(next);
  t.ok(signed.fiscalReference.logs.every((l: any) => !l.error && verifies(signed.fiscalReference, l)), 'the TSE answering again signs the next sale normally');
});

t.test('a project on provider none sells without signing: its orders carry no fiscalReference and still get receipts', async (t) => {
  const put = await svc.request('PUT', `${p}/settings`, { token: admin, body: { ...BaseSettings, fiscalization: { provider: 'none', reason: 'Testbetrieb ohne TSE' } } });
  t.equal(put.status, 200, put.text);
  const id = await created();
  await finishPayment(svc, fx, id, 'successful');
  const receipt = await fetch(`${svc.url}${p}/orders/${id}/receipt`, { headers: { authorization: `Bearer ${ordersToken}` } });
  t.equal(receipt.status, 200);
  const order = await svc.request('GET', `${p}/orders/${id}`, { token: ordersToken });
  t.equal(order.body.state, 'final');
  t.notOk('fiscalReference' in order.body, 'no fiscalReference');
  t.same(await svc.sql`select from fiscal_transactions where process_id = ${id}`, [], 'no TSE transaction');
  const registers = await svc.request('GET', `${p}/fiscalization/registers`, { token: admin });
  t.match(registers.body, { provider: 'none', reason: 'Testbetrieb ohne TSE', tse: null });
  await svc.request('PUT', `${p}/settings`, { token: admin, body: { ...BaseSettings, fiscalization: { provider: 'local' } } });
});

t.test('the registers list the TSE (not certified) and one cash register per shop', async (t) => {
  const res = await svc.request('GET', `${p}/fiscalization/registers`, { token: admin });
  t.equal(res.status, 200, res.text);
  const [tss] = await svc.sql<{ serial_number: string }[]>`select serial_number from fiscal_local_tss where project = ${TestProject}`;
  t.match(res.body, { provider: 'local', tse: { provider: 'local', serialNumber: tss!.serial_number, signatureAlgorithm: 'ecdsa-plain-SHA256', certified: false } });
  t.match(res.body.cashRegisters, [
    { serialNumber: 's1', shopID: 's1', name: 'Shop 1', address: { street: 'Torstraße 1', city: 'Berlin' } },
    { serialNumber: 's2', name: 'Shop 2' },
  ]);
  const reader = await svc.request('GET', `${p}/fiscalization/registers`, { token: ordersToken });
  t.equal(reader.status, 403, 'needs projectsWrite');
});

t.test('a fiskaly choice its TSE cannot sign with is refused field by field, before anything is written; stored secrets count', async (t) => {
  const project = 'tse-choice';
  const token = await svc.token(['projectsWrite'], { project });
  const put = (fiscalization: object) => svc.request('PUT', `/${project}/settings`, { token, body: { ...BaseSettings, fiscalization } });
  const bare = await put({ provider: 'fiskaly' });
  t.equal(bare.status, 400, bare.text);
  t.same(bare.body.details.map((d: any) => d.path), ['fiscalization.tssId', 'fiscalization.apiKey', 'fiscalization.apiSecret']);
  t.match(bare.body, { type: 'bad_request', message: /fiskaly needs the TSS id, the API key, the API secret/ });
  const unchanged = await svc.request('GET', `/${project}/settings`, { token });
  t.equal(unchanged.body.fiscalization, undefined, 'nothing was written');

  t.equal((await put({ provider: 'fiskaly', tssId: 'tss-1', apiKey: 'key-1', apiSecret: 'secret-1' })).status, 200);
  t.equal((await put({ provider: 'local' })).status, 200);
  const back = await put({ provider: 'fiskaly', tssId: 'tss-1' });
  t.equal(back.status, 200, `the stored key and secret count: ${back.text}`);
  t.same(back.body.fiscalization, { provider: 'fiskaly', tssId: 'tss-1', apiKeySet: true, apiSecretSet: true, adminPinSet: false });
  const noTss = await put({ provider: 'fiskaly', apiKey: 'key-2' });
  t.equal(noTss.status, 400, 'the TSS is named in every PUT, as the provider is');
  t.same(noTss.body.details.map((d: any) => d.path), ['fiscalization.tssId']);
  const [stored] = await svc.sql<{ fiscalization: any }[]>`select fiscalization from project_settings where project = ${project}`;
  t.match(stored!.fiscalization, { tssId: 'tss-1', apiKey: /^sealed:v1:/ }, 'a refused PUT changed nothing');
  t.equal(openFiscalSecrets(project, stored!.fiscalization, testKeyRing).apiKey, 'key-1', 'the key stored is the first one');
});

t.test('the TSE secrets are write-only: never answered, kept by a PUT without them, never logged', async (t) => {
  const secrets = { apiKey: 'key-SECRET-1234', apiSecret: 'secret-SECRET-5678', adminPin: 'pin-SECRET-9012' };
  const fiskaly = { provider: 'fiskaly', tssId: 'b7c3c0b4-0000-4000-8000-000000000001', ...secrets };
  const put = await svc.request('PUT', `${p}/settings`, { token: admin, body: { ...BaseSettings, fiscalization: fiskaly } });
  t.equal(put.status, 200, put.text);
  t.same(put.body.fiscalization, { provider: 'fiskaly', tssId: fiskaly.tssId, apiKeySet: true, apiSecretSet: true, adminPinSet: true });
  const registers = await svc.request('GET', `${p}/fiscalization/registers`, { token: admin });
  t.match(registers.body, { provider: 'fiskaly', tse: null }, "the local signer's device is not fiskaly's: no TSE to register until fiskaly signed a sale");
  const again = await svc.request('PUT', `${p}/settings`, { token: admin, body: { ...BaseSettings, fiscalization: { provider: 'fiskaly', tssId: fiskaly.tssId } } });
  t.same(again.body.fiscalization, put.body.fiscalization, 'a PUT without the secrets keeps them');
  const kept = await svc.request('PUT', `${p}/settings`, { token: admin, body: BaseSettings });
  t.same(kept.body.fiscalization, put.body.fiscalization, 'a PUT without fiscalization keeps the choice');
  const get = await svc.request('GET', `${p}/settings`, { token: admin });
  t.same(get.body.fiscalization, put.body.fiscalization);
  const [stored] = await svc.sql<{ fiscalization: any }[]>`select fiscalization from project_settings where project = ${TestProject}`;
  t.match(stored!.fiscalization, { apiKey: /^sealed:v1:/, apiSecret: /^sealed:v1:/, adminPin: /^sealed:v1:/ }, 'stored sealed');
  t.notOk(Object.values(secrets).some((secret) => JSON.stringify(stored).includes(secret)), 'no secret stored plain');
  t.match(openFiscalSecrets(TestProject, stored!.fiscalization, testKeyRing), secrets, 'the provider opens them');
  for (const text of [put.text, again.text, kept.text, get.text, JSON.stringify(events.events), ...logLines]) {
    if (Object.values(secrets).some((s) => text.includes(s))) t.fail(`a secret was shown: ${text.slice(0, 200)}`);
  }
  const lookalike = { ...fiskaly, apiKey: 'sealed:v1:no-such-key:AAAA:BBBB' };
  t.equal((await svc.request('PUT', `${p}/settings`, { token: admin, body: { ...BaseSettings, fiscalization: lookalike } })).status, 200);
  const [sealedLookalike] = await svc.sql<{ fiscalization: any }[]>`select fiscalization from project_settings where project = ${TestProject}`;
  t.not(sealedLookalike!.fiscalization.apiKey, lookalike.apiKey, 'a secret that looks sealed is sealed like any other text');
  t.equal(openFiscalSecrets(TestProject, sealedLookalike!.fiscalization, testKeyRing).apiKey, lookalike.apiKey, 'and opens to what was sent');
  await svc.request('PUT', `${p}/settings`, { token: admin, body: { ...BaseSettings, fiscalization: { provider: 'local' } } });
});

t.test('in production a project that chose no TSE cannot sell: process creation answers 409 fiscalization_required', async (t) => {
  const prod = await startTestService(t, { env: { NODE_ENV: 'production' } });
  const prodFx = await seedCheckout(prod);
  const res = await prodFx.createProcess({ items: cart });
  t.equal(res.status, 409, res.text);
  t.equal(res.body.type, 'fiscalization_required');
  t.match(res.body.message, /fiscalization\.provider/, 'the message says how to choose');
  t.same(await prod.sql`select from checkout_processes`, [], 'nothing stored');
  t.same(await prod.sql`select from outbox where subject like 'jobs.fiscal.%'`, [], 'nothing queued');
  const prodAdmin = await prod.token(['projectsWrite']);
  await prod.request('PUT', `${p}/settings`, { token: prodAdmin, body: { ...BaseSettings, fiscalization: { provider: 'none', reason: 'Test' } } });
  t.equal((await prodFx.createProcess({ items: cart })).status, 201, 'a choice made, it sells');
});

t.test("the closing of these sales exports DSFinV-K with the local TSE in tse.csv and every Beleg's signature, and passes the checks", async (t) => {
  const tokens = await closingTokens(svc);
  const job = await runJob(svc, tokens, { shopID: 's1', deviceID: 'test', formats: ['dsfinvk_2023_03'] });
  t.equal(job.state, 'done', JSON.stringify(job));
  const closing = await closingWithLogs(svc, tokens.read, 's1', job.sequenceNumber);
  const download = await downloadLog(svc, tokens.read, closing.links.dsfinvk_2023_03.href);
  const { problems, tables } = validateDsfinvk(download.bytes, closing);
  t.same(problems, [], 'the checker finds nothing');
  t.equal(tables['tse.csv']!.length, 1, 'one TSE: the local signer of the project');
  t.match(tables['tse.csv']![0], { TSE_SIG_ALGO: 'ecdsa-plain-SHA256', TSE_ZEITFORMAT: 'unixTime' });
  const rows = tables['transactions_tse.csv']!;
  const signed = rows.filter((r) => r.TSE_TA_SIG !== '');
  t.ok(signed.length >= 55, `the signed Belege carry their signatures (${signed.length} of ${rows.length})`);
  t.ok(rows.some((r) => r.TSE_TA_FEHLER!.startsWith('TSE-Ausfall')), 'the sale signed during the outage says so');
  t.ok(closing.tseFailures >= 1, `the closing counts its TSE failures (${closing.tseFailures})`);
});

t.test('processData puts each rate under its DSFinV-K letter and refuses a rate without one', async (t) => {
  t.same(receiptProcessData({ '19': 1190, '7': 214, '10.7': 0, '5.5': 5, '0': 100 }, { amount: 1509, method: 'cash' }), {
    kind: 'signable',
    processData: 'Beleg^11.90_2.14_0.00_0.05_1.00^15.09:Bar',
  });
  t.same(receiptProcessData({ '10.7': 1000 }, { amount: 1000, method: 'ec' }), { kind: 'signable', processData: 'Beleg^0.00_0.00_10.00_0.00_0.00^10.00:Unbar' });
  t.same(transferProcessData({ '19': 1190, '7': 214 }), { kind: 'signable', processData: 'AVTransfer^11.90_2.14_0.00_0.00_0.00^' });
  t.match(transferProcessData({ '16': 100 }), { kind: 'unsignable', reason: /16 %/ });
  t.equal(fiscalAmount(-5), '-0.05');
  t.match(receiptProcessData({ '16': 100 }, { amount: 100, method: 'cash' }), { kind: 'unsignable', reason: /16 %/ });
});

t.test('a local TSS kept with a DER SPKI public key (before 2026-11-26) shows the uncompressed point', async (t) => {
  const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  const point = uncompressedPoint(spki.toString('base64'));
  t.equal(Buffer.from(point, 'base64').length, 65);
  t.ok(pointPublicKey(point).equals(publicKey), 'the same key');
  t.equal(uncompressedPoint(point), point, 'a point stays as it is');
});

t.test("a signer that makes a project's TSS while another worker process is keeping one answers the one kept", async (t) => {
  const project = 'made-at-once';
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  let device: ReturnType<ReturnType<typeof createLocalProvider>['device']> | undefined;
  await svc.sql.begin(async (tx) => {
    await tx`
      insert into fiscal_local_tss (project, private_key, public_key, serial_number, certificate)
      values (${project}, ${privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()}, ${uncompressedPoint(publicKey.export({ type: 'spki', format: 'der' }).toString('base64'))}, 'kept-first', 'test')`;
    // This signer finds no TSS (not committed yet), makes one, and its insert waits for this transaction.
    device = createLocalProvider({ sql: svc.sql }).device(project);
    await sleep(300);
  });
  t.equal((await device!).serialNumber, 'kept-first', 'the TSS the other kept');
});

t.test('two signers of one project side by side (two worker processes) share its counters: none repeats or skips, a finish answers its start', async (t) => {
  const project = 'two-signers';
  const [a, b] = [createLocalProvider({ sql: svc.sql }), createLocalProvider({ sql: svc.sql })];
  const address = (i: number) => ({ project, tssId: project, clientId: 'c', clientSerialNumber: 's1', transactionId: `tx-${i}` });
  const finish = (i: number) => ({ ...address(i), processType: 'Kassenbeleg-V1', processData: `Beleg^${i}.00_0.00_0.00_0.00_0.00^${i}.00:Bar` });
  // Each transaction started by one signer and finished by the other, all at once; every fifth
  // finished without a start (the start job never ran): the finish starts it.
  const answers = await Promise.all(
    Array.from({ length: 40 }, async (_, i) => {
      const [starter, finisher] = i % 2 ? [a, b] : [b, a];
      const started = i % 5 === 0 ? undefined : starter.start(address(i));
      const finished = await finisher.finish(finish(i));
      return { started: await started, finished };
    }),
  );
  const device = await a.device(project);
  const logs = await svc.sql<{ transaction_id: string; revision: number; transaction_number: number; counter: number }[]>`
    select transaction_id, revision, transaction_number::int, counter::int from fiscal_local_logs where project = ${project} order by counter`;
  t.same(logs.map((l) => l.counter), Array.from({ length: 80 }, (_, i) => i + 1), 'signature counters 1..80: no gap, no repeat');
  t.same([...new Set(logs.map((l) => l.transaction_number))].sort((x, y) => x - y), Array.from({ length: 40 }, (_, i) => i + 1), 'transaction numbers 1..40');
  answers.forEach(({ started, finished }, i) => {
    if (finished.kind !== 'signed' || (started && started.kind !== 'signed')) return t.fail(`transaction ${i} not signed`);
    const kept = logs.filter((l) => l.transaction_id === `tx-${i}`);
    t.same(kept.map((l) => l.revision), [1, 2], `transaction ${i}: one start, one finish`);
    t.same([finished.value.started?.log.counter, finished.value.log.counter], kept.map((l) => l.counter), `transaction ${i}: the finish answers the start kept`);
    if (started?.kind === 'signed') t.equal(started.value.log.counter, kept[0]!.counter, `transaction ${i}: the start's own answer is the one kept`);
    const reference = { securityDeviceModule: device, transactionNumber: finished.value.transactionNumber };
    if (!verifies(reference, finished.value.log) || !verifies(reference, finished.value.started!.log)) t.fail(`transaction ${i}: a signature does not verify`);
  });
});
