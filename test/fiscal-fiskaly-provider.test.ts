import { createPublicKey, randomUUID, verify } from 'node:crypto';
import { pino } from 'pino';
import t, { type Test } from 'tap';
import { createFiskalyProvider } from '../actors/fiscal/providers/fiskaly.js';
import { receiptOf } from '../actors/fiscal/providers/fiskaly-api.js';
import type { FinishRequest, ProviderResult, SignedLog, TransactionAddress } from '../actors/fiscal/provider.js';
import type { SecurityDeviceModule } from '../subjects/fiscal.js';
import { signedMessage, startFiskalyStandIn, type FiskalyStandIn } from './support/fiskaly-stand-in.js';
import { systemResolve } from '../src/infra/destinations.js';
import { createOutgoingHttp } from '../src/infra/outgoing-http.js';

/**
 * The fiskaly provider against a stand-in of fiskaly SIGN DE API v2 (a real HTTP server with a real
 * ECDSA key): what it sends, how it signs in, how it survives expired tokens, outages and lost
 * answers without a second signature, and that no secret leaves it.
 */

// The process's client for fiskaly, as actors/index.ts makes it (the stand-in listens on loopback).
const http = createOutgoingHttp({ policy: { allowPrivate: true, resolve: systemResolve }, connectionsPerOrigin: 8, maxBodyBytes: 1024 * 1024 });
t.teardown(() => http.close());

const PaidReceipt = 'Beleg^11.90_5.35_0.00_0.00_0.00^7.25:Bar_10.00:Unbar';

function setup(standIn: FiskalyStandIn, overrides: { apiSecret?: string; adminPin?: string; timeoutMs?: number; baseUrl?: string } = {}) {
  const lines: string[] = [];
  const log = pino({ level: 'trace' }, { write: (line: string) => lines.push(line) });
  const provider = createFiskalyProvider({
    baseUrl: overrides.baseUrl ?? standIn.url,
    apiKey: standIn.apiKey,
    apiSecret: overrides.apiSecret ?? standIn.apiSecret,
    adminPin: overrides.adminPin ?? standIn.adminPin,
    tssId: standIn.tssId,
    timeoutMs: overrides.timeoutMs ?? 2000,
    http,
    log,
  });
  return { provider, lines };
}

const clientIds = new Map<string, string>();
function address(standIn: FiskalyStandIn, shop = 'shop-1'): TransactionAddress {
  if (!clientIds.has(shop)) clientIds.set(shop, randomUUID());
  return { project: 'p1', tssId: standIn.tssId, clientId: clientIds.get(shop)!, clientSerialNumber: shop, transactionId: randomUUID() };
}

function finishing(tx: TransactionAddress, processData = PaidReceipt): FinishRequest {
  return { ...tx, processType: 'Kassenbeleg-V1', processData };
}

function signed<T>(t: Test, result: ProviderResult<T>): T {
  if (result.kind !== 'signed') t.fail(`expected a signature, got ${JSON.stringify(result)}`);
  return (result as { value: T }).value;
}

/** The stand-in's TSS signature over a log, checked with the public key the provider reported. */
function verifies(device: SecurityDeviceModule, clientSerialNumber: string, transactionNumber: number, log: SignedLog): boolean {
  const point = Buffer.from(device.publicKey, 'base64');
  const key = createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33).toString('base64url') }, format: 'jwk' });
  const message = signedMessage({ clientSerialNumber, transactionNumber, counter: log.counter, timestamp: log.timestamp, processType: log.processType, processData: log.processData });
  return verify('sha256', Buffer.from(message), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(log.signature, 'base64'));
}

t.test('starts and finishes a transaction whose signatures verify with the TSS public key', async (t) => {
  const standIn = await startFiskalyStandIn(t);
  const { provider } = setup(standIn);
  const tx = address(standIn);
  const started = signed(t, await provider.start(tx));
  t.equal(provider.name, 'fiskaly');
  t.match(started.device, { signatureAlgorithm: 'ecdsa-plain-SHA256', logTimeFormat: 'unixTime', certificate: /^-----BEGIN CERTIFICATE-----/ });
  t.equal(started.device.serialNumber.length, 64, "the TSS serial as fiskaly reports it: the public key's SHA-256, hex");
  t.same({ processType: started.log.processType, processData: started.log.processData, counter: started.log.counter }, { processType: '', processData: '', counter: 1 });
  t.equal(started.log.time, new Date(Number(started.log.timestamp) * 1000).toISOString());
  t.ok(verifies(started.device, 'shop-1', started.transactionNumber, started.log), 'the start signature verifies');

  const finished = signed(t, await provider.finish(finishing(tx)));
  t.equal(finished.transactionNumber, started.transactionNumber);
  t.equal(finished.log.counter, 2);
  t.same({ processType: finished.log.processType, processData: finished.log.processData }, { processType: 'Kassenbeleg-V1', processData: PaidReceipt }, 'fiskaly signed the processData the checkout made');
  t.ok(verifies(finished.device, 'shop-1', finished.transactionNumber, finished.log), 'the finish signature verifies');
  t.equal(standIn.revisionState(tx.transactionId, 2), 'FINISHED');
  t.equal(standIn.count('GET', `/tss/${standIn.tssId}`), 1, 'the TSS is read once, then remembered');
});

t.test('maps processData to a standard_v1 receipt with decimal text of at least two decimals', async (t) => {
  t.same(receiptOf('Beleg^10_5.3_0.00_0.00_1.00^15.3:Bar|1:Unbar:chf'), {
    body: {
      state: 'FINISHED',
      receipt: {
        receipt_type: 'RECEIPT',
        amounts_per_vat_rate: [
          { vat_rate: 'NORMAL', amount: '10.00' },
          { vat_rate: 'REDUCED_1', amount: '5.30' },
          { vat_rate: 'SPECIAL_RATE_1', amount: '0.00' },
          { vat_rate: 'SPECIAL_RATE_2', amount: '0.00' },
          { vat_rate: 'NULL', amount: '1.00' },
        ],
        amounts_per_payment_type: [
          { payment_type: 'CASH', amount: '15.30' },
          { payment_type: 'NON_CASH', amount: '1.00', currency_code: 'CHF' },
        ],
      },
    },
  });
  t.match(receiptOf('AVBelegabbruch^0.00_0.00_0.00_0.00_0.00^'), { body: { state: 'CANCELLED', receipt: { receipt_type: 'ABORT' } } });
  t.notOk('amounts_per_payment_type' in (receiptOf('AVBelegabbruch^0.00_0.00_0.00_0.00_0.00^') as { body: { receipt: object } }).body.receipt);
  t.match(receiptOf('Beleg^1.00_0.00^1.00:Bar'), { error: /five gross amounts/ });
  t.match(receiptOf('Quittung^1.00_0.00_0.00_0.00_0.00^1.00:Bar'), { error: /not a DSFinV-K receipt type/ });
  t.match(receiptOf('Beleg^1.00_0.00_0.00_0.00_0.00^1.00:Karte'), { error: /not <amount>:Bar/ });
  t.match(receiptOf('Beleg^1,00_0.00_0.00_0.00_0.00^1.00:Bar'), { error: /not a decimal/ });
});

t.test('finishes an aborted checkout as a cancelled transaction with an abort receipt', async (t) => {
  const standIn = await startFiskalyStandIn(t);
  const { provider } = setup(standIn);
  const tx = address(standIn);
  signed(t, await provider.start(tx));
  const aborted = signed(t, await provider.finish(finishing(tx, 'AVBelegabbruch^0.00_0.00_0.00_0.00_0.00^')));
  t.equal(standIn.revisionState(tx.transactionId, 2), 'CANCELLED');
  t.equal(aborted.log.processData, 'AVBelegabbruch^0.00_0.00_0.00_0.00_0.00^', 'fiskaly signed the abort as AVBelegabbruch');
  t.ok(verifies(aborted.device, 'shop-1', aborted.transactionNumber, aborted.log));
});

t.test('authenticates again exactly once when the token has expired, then signs', async (t) => {
  const standIn = await startFiskalyStandIn(t);
  const { provider } = setup(standIn);
  const tx = address(standIn);
  signed(t, await provider.start(tx));
  t.equal(standIn.count('POST', '/auth'), 1);
  standIn.expireTokens();
  signed(t, await provider.finish(finishing(tx)));
  t.equal(standIn.count('POST', '/auth'), 2, 'one extra POST /auth');
  t.equal(standIn.calls.filter((c) => c.status === 401).length, 1, 'one 401, then the call again');
  t.equal(standIn.signedRevisions(tx.transactionId), 2);
});

t.test('renews the token shortly before it expires, without meeting a 401', async (t) => {
  const standIn = await startFiskalyStandIn(t, { tokenLifetimeSeconds: 2 });
  const { provider } = setup(standIn);
  signed(t, await provider.start(address(standIn)));
  // Renewed at a tenth of the lifetime before the expiry: after 1.8 s of the 2 s.
  await new Promise((r) => setTimeout(r, 1850));
  signed(t, await provider.start(address(standIn)));
  t.equal(standIn.count('POST', '/auth'), 2);
  t.equal(standIn.calls.filter((c) => c.status === 401).length, 0);
});

t.test('shares one POST /auth and one client registration among concurrent calls', async (t) => {
  const standIn = await startFiskalyStandIn(t);
  const { provider } = setup(standIn);
  const results = await Promise.all(Array.from({ length: 6 }, (_, i) => provider.start(address(standIn, i % 2 ? 'shop-a' : 'shop-b'))));
  t.same(results.map((r) => r.kind), Array(6).fill('signed'));
  t.equal(standIn.count('POST', '/auth'), 1);
  t.equal(standIn.clientCreations(clientIds.get('shop-a')!), 1);
  t.equal(standIn.clientCreations(clientIds.get('shop-b')!), 1);
  t.equal(standIn.count('PUT', /\/client\//), 2, 'one PUT per shop');
  t.equal(standIn.count('POST', /\/admin\/auth$/), 2, 'an admin login per registration');
  t.equal(standIn.count('POST', /\/admin\/logout$/), 2, 'each followed by its logout');
  const counters = results.map((r) => (r.kind === 'signed' ? r.value.log.counter : 0)).sort((a, b) => a - b);
  t.same(counters, [1, 2, 3, 4, 5, 6], 'six signatures, each its own counter');
});

t.test('registers a TSE client once per shop, and after a restart finds it instead of registering again', async (t) => {
  const standIn = await startFiskalyStandIn(t);
  const first = setup(standIn).provider;
  for (let i = 0; i < 3; i++) signed(t, await first.start(address(standIn, 'shop-once')));
  const clientId = clientIds.get('shop-once')!;
  t.equal(standIn.clientCreations(clientId), 1);
  t.equal(standIn.count('GET', `/tss/${standIn.tssId}/client/${clientId}`), 1, 'asked once, then remembered');

  const restarted = setup(standIn).provider;
  signed(t, await restarted.start(address(standIn, 'shop-once')));
  t.equal(standIn.count('PUT', `/tss/${standIn.tssId}/client/${clientId}`), 1, 'no second registration');
  t.equal(standIn.count('POST', /\/admin\/auth$/), 1, 'no second admin login');
});

t.test('answers retry with the Retry-After of a 503, and the retried finish is one revision at the TSE', async (t) => {
  const standIn = await startFiskalyStandIn(t);
  const { provider } = setup(standIn);
  const tx = address(standIn);
  signed(t, await provider.start(tx));
  standIn.failNext(2, { status: 503, retryAfterSeconds: 2, match: (method, path) => method === 'PUT' && path.includes('/tx/') });
  t.match(await provider.finish(finishing(tx)), { kind: 'retry', afterMs: 2000, reason: /503/ });
  t.match(await provider.finish(finishing(tx)), { kind: 'retry', afterMs: 2000 });
  const finished = signed(t, await provider.finish(finishing(tx)));
  t.equal(standIn.revisionCalls(tx.transactionId, 2), 3, 'three calls of revision 2');
  t.equal(standIn.signedRevisions(tx.transactionId), 2, 'one revision 2 in effect');
  t.equal(finished.log.counter, 2);
  t.equal(standIn.signatureCounter(), 2, 'no signature was spent on the failed calls');
});

t.test('answers retry for 429 with its Retry-After, and for 500 without one', async (t) => {
  const standIn = await startFiskalyStandIn(t);
  const { provider } = setup(standIn);
  standIn.failNext(1, { status: 429, retryAfterSeconds: 7 });
  t.match(await provider.start(address(standIn)), { kind: 'retry', afterMs: 7000, reason: /429/ });
  standIn.failNext(1, { status: 500 });
  const result = await provider.start(address(standIn));
  t.match(result, { kind: 'retry', reason: /500/ });
  t.equal((result as { afterMs?: number }).afterMs, undefined);
});

for (const mode of ['replay', 'conflict'] as const) {
  t.test(`a repeated finish whose first answer was lost answers the same signature and counter (fiskaly answering the repeat by ${mode})`, async (t) => {
    const standIn = await startFiskalyStandIn(t);
    standIn.repeatedRevision = mode;
    const { provider } = setup(standIn);
    const tx = address(standIn);
    signed(t, await provider.start(tx));
    standIn.failNext(1, { status: 502, afterApplying: true, match: (method, path) => method === 'PUT' && path.includes('/tx/') });
    t.match(await provider.finish(finishing(tx)), { kind: 'retry' }, 'fiskaly signed, but the answer was lost');
    const again = signed(t, await provider.finish(finishing(tx)));
    const onceMore = signed(t, await provider.finish(finishing(tx)));
    t.same(onceMore, again, 'every repeat answers the same');
    t.equal(again.log.counter, 2);
    t.equal(standIn.signatureCounter(), 2, 'one signature for revision 2');
    t.equal(standIn.signedRevisions(tx.transactionId), 2);
    t.ok(verifies(again.device, 'shop-1', again.transactionNumber, again.log));
    t.equal(standIn.count('GET', /\/tx\//), mode === 'conflict' ? 2 : 0, mode === 'conflict' ? 'the 409 made it read the revision' : 'no read needed');
  });
}

t.test("fails with fiskaly's error text when fiskaly refuses a request", async (t) => {
  const standIn = await startFiskalyStandIn(t);
  const { provider } = setup(standIn);
  const refused = await provider.start(address(standIn, 'shop_with_underscore'));
  t.match(refused, { kind: 'failed', reason: /400.*E_ILLEGAL_CLIENT_SERIAL/ });

  const tx = address(standIn);
  signed(t, await provider.start(tx));
  const unknownType = await provider.finish({ ...finishing(tx), processType: 'Bestellung-V1' });
  t.match(unknownType, { kind: 'failed', reason: /Kassenbeleg-V1/ });
  t.match(await provider.finish(finishing(tx, 'Beleg^x')), { kind: 'failed', reason: /three parts/ });
  standIn.failNext(1, { status: 423, message: 'E_TSS_DEFECTIVE' });
  t.match(await provider.finish(finishing(tx)), { kind: 'failed', reason: /423.*E_TSS_DEFECTIVE/ });
});

t.test('fails after a second 401 in a row, having authenticated again once', async (t) => {
  const standIn = await startFiskalyStandIn(t);
  const { provider } = setup(standIn);
  const tx = address(standIn);
  signed(t, await provider.start(tx));
  standIn.failNext(2, { status: 401, match: (method, path) => method === 'PUT' && path.includes('/tx/') });
  t.match(await provider.finish(finishing(tx)), { kind: 'failed', reason: /401/ });
  t.equal(standIn.count('POST', '/auth'), 2);
});

t.test('fails at once on a wrong API secret, and a wrong admin PIN is not tried again', async (t) => {
  const standIn = await startFiskalyStandIn(t);
  const wrongSecret = setup(standIn, { apiSecret: 'not-the-secret' }).provider;
  t.match(await wrongSecret.start(address(standIn)), { kind: 'failed', reason: /POST \/auth.*E_UNAUTHORIZED/ });
  t.equal(standIn.count('POST', '/auth'), 1);

  const wrongPin = setup(standIn, { adminPin: 'wrong-pin' }).provider;
  t.match(await wrongPin.start(address(standIn, 'shop-pin')), { kind: 'failed', reason: /admin\/auth/ });
  t.match(await wrongPin.start(address(standIn, 'shop-pin')), { kind: 'failed', reason: /not trying it again/ });
  t.equal(standIn.count('POST', /\/admin\/auth$/), 1, 'one wrong attempt of the five that block the PIN');
});

t.test('answers retry when fiskaly is slower than the timeout or cannot be reached', async (t) => {
  const standIn = await startFiskalyStandIn(t);
  standIn.delayMs = 300;
  t.match(await setup(standIn, { timeoutMs: 100 }).provider.start(address(standIn)), { kind: 'retry', reason: /no answer within 100 ms/ });
  const gone = standIn.url.replace(/:\d+\//, ':1/');
  t.match(await setup(standIn, { baseUrl: gone }).provider.start(address(standIn)), { kind: 'retry', reason: /cannot be reached/ });
});

t.test('keeps the API secret, the admin PIN and the tokens out of every log line and every reason', async (t) => {
  const standIn = await startFiskalyStandIn(t);
  const { provider, lines } = setup(standIn);
  const reasons: string[] = [];
  const keep = (r: ProviderResult<unknown>) => {
    if (r.kind !== 'signed') reasons.push(r.reason);
  };
  const tx = address(standIn);
  keep(await provider.start(tx));
  standIn.expireTokens();
  standIn.failNext(1, { status: 503, message: `upstream said ${standIn.apiSecret} and ${standIn.adminPin}` });
  keep(await provider.finish(finishing(tx)));
  standIn.failNext(1, { status: 400, message: `echo ${standIn.apiSecret} ${standIn.issuedTokens().at(-1)}` });
  keep(await provider.finish(finishing(tx)));
  keep(await setup(standIn, { adminPin: 'wrong-pin' }).provider.start(address(standIn, 'shop-x')));
  keep(await setup(standIn, { apiSecret: 'not-the-secret' }).provider.start(address(standIn)));
  t.ok(lines.length > 3, 'the provider logged');
  t.ok(reasons.length >= 3, 'and gave reasons');
  const secrets = [standIn.apiSecret, standIn.adminPin, ...standIn.issuedTokens()];
  const leaks = [...lines, ...reasons].filter((text) => secrets.some((secret) => text.includes(secret)));
  t.same(leaks, [], `no secret in any of ${lines.length} log lines and ${reasons.length} reasons`);
  t.ok(reasons.some((r) => r.includes('[redacted]')), "fiskaly's echo of a secret is redacted");
});

t.test('the first starts, side by side, ask for the TSS once', async (t) => {
  const standIn = await startFiskalyStandIn(t);
  const { provider } = setup(standIn);
  const results = await Promise.all(Array.from({ length: 8 }, () => provider.start(address(standIn))));
  t.same(results.map((r) => r.kind), Array(8).fill('signed'));
  t.equal(standIn.count('GET', `/tss/${standIn.tssId}`), 1, 'one GET of the TSS');
});
