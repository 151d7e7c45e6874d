import { createHash, generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for fiskaly SIGN DE API v2: a real HTTP server on 127.0.0.1 speaking the routes the
 * fiskaly provider uses, with the shapes of fiskaly's OpenAPI 2.1.35 (see
 * actors/fiscal/providers/fiskaly-api.ts for where they come from): `POST /auth`, the TSS, admin
 * login and logout, clients (creating one needs the admin login) and transactions with revisions.
 *
 * The TSS signs with a real ECDSA P-256 key as `ecdsa-plain-SHA256` (the only algorithm the
 * OpenAPI lists; its example public key is a 65-byte P-256 point): a raw r||s signature, base64,
 * over `signedMessage(...)` (fiskaly signs a TR-03151 log message; the stand-in signs this line
 * instead, which a test can rebuild from what the provider returned). Its signature counter and
 * transaction numbers only go up.
 *
 * A repeated revision answers the stored answer again, as fiskaly's "Idempotent Requests" section
 * promises, or 409 E_PENDING_TX_CONFLICT when a test sets `repeatedRevision = 'conflict'`.
 */
export interface FiskalyStandIn {
  /** The API base, …/api/v2. */
  url: string;
  apiKey: string;
  apiSecret: string;
  adminPin: string;
  tssId: string;
  publicKey: KeyObject;
  /** Every request, in order. */
  calls: Array<{ method: string; path: string; status: number }>;
  count(method: string, path: string | RegExp): number;
  /** PUT calls for a revision of a transaction, answered or not. */
  revisionCalls(txId: string, revision: number): number;
  /** Revisions the TSS signed for a transaction: each one once, whatever the number of calls. */
  signedRevisions(txId: string): number;
  /** Clients created (registered by a PUT that made them). */
  clientCreations(clientId: string): number;
  signatureCounter(): number;
  /** The state a revision of a transaction holds, if it exists. */
  revisionState(txId: string, revision: number): string | undefined;
  /** Every access token issued (to check none leaks). */
  issuedTokens(): string[];
  /** Makes every token issued so far invalid now. */
  expireTokens(): void;
  /** The next `n` requests that `match` answer `status` (Retry-After 1 s for 429 and 503 unless told); with `afterApplying`, after doing what they asked (the answer is lost). */
  failNext(n: number, options?: { status?: number; retryAfterSeconds?: number; afterApplying?: boolean; message?: string; match?: (method: string, path: string) => boolean }): void;
  /** Waits this long before every answer. */
  delayMs: number;
  repeatedRevision: 'replay' | 'conflict';
  tokenLifetimeSeconds: number;
}

/** What the stand-in's TSS signs for a log: rebuildable from the provider's result. */
export function signedMessage(log: { clientSerialNumber: string; transactionNumber: number; counter: number; timestamp: string; processType: string; processData: string }): string {
  return ['V0', log.clientSerialNumber, log.processType, log.processData, log.transactionNumber, log.counter, log.timestamp].join(';');
}

const BonTypes: Record<string, string> = {
  RECEIPT: 'Beleg', TRAINING: 'AVTraining', TRANSFER: 'AVTransfer', ORDER: 'AVBestellung', CANCELLATION: 'AVBelegabbruch', ABORT: 'AVBelegabbruch',
  BENEFIT_IN_KIND: 'AVSachbezug', INVOICE: 'AVRechnung', OTHER: 'AVSonstige', ANNULATION: 'AVBelegstorno',
};
const VatRates = ['NORMAL', 'REDUCED_1', 'SPECIAL_RATE_1', 'SPECIAL_RATE_2', 'NULL'];
const Amount = /^-?\d+(\.\d{2,5})$/;
const ClientSerial = /^[A-Za-z0-9 '()+,\-.:=?]{1,70}$/;

interface Revision { state: string; body: string; answer: Record<string, unknown> }
interface Transaction { number: number; clientId: string; timeStart: number; revisions: Revision[] }

/** Whoever stops the stand-in: a tap test, or the benchmark (bench/scenarios/fiscal.ts). */
export interface StandInOwner {
  teardown(stop: () => Promise<void>): void;
}

export async function startFiskalyStandIn(t: StandInOwner, options: { tokenLifetimeSeconds?: number } = {}): Promise<FiskalyStandIn> {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  const point = Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]);
  const tss = {
    id: randomUUID(),
    publicKey: point.toString('base64'),
    serial: createHash('sha256').update(point).digest('hex'),
    // A stand-in has no certificate; base64 of PEM text as fiskaly sends it, saying what it is.
    certificate: Buffer.from(`-----BEGIN CERTIFICATE-----\n${Buffer.from('fiskaly stand-in: not a certificate').toString('base64')}\n-----END CERTIFICATE-----\n`).toString('base64'),
  };
  const tokens = new Map<string, number>();
  const adminSessions = new Set<string>();
  const clients = new Map<string, { serial: string; created: number }>();
  const transactions = new Map<string, Transaction>();
  const putCalls = new Map<string, number>();
  let counter = 0;
  let txNumber = 0;
  const failures: Array<{ status: number; retryAfterSeconds?: number; afterApplying: boolean; message: string; match: (method: string, path: string) => boolean }> = [];

  const standIn: FiskalyStandIn = {
    url: '',
    apiKey: `key-${randomUUID()}`,
    apiSecret: `secret-${randomUUID()}`,
    adminPin: `pin${randomUUID().slice(0, 8)}`,
    tssId: tss.id,
    publicKey,
    calls: [],
    count: (method, path) => standIn.calls.filter((c) => c.method === method && (typeof path === 'string' ? c.path === path : path.test(c.path))).length,
    revisionCalls: (txId, revision) => putCalls.get(`${txId}#${revision}`) ?? 0,
    signedRevisions: (txId) => transactions.get(txId)?.revisions.length ?? 0,
    clientCreations: (clientId) => clients.get(clientId)?.created ?? 0,
    signatureCounter: () => counter,
    revisionState: (txId, revision) => transactions.get(txId)?.revisions[revision - 1]?.state,
    issuedTokens: () => [...tokens.keys()],
    expireTokens: () => tokens.forEach((_, token) => tokens.set(token, 0)),
    failNext: (n, { status = 503, retryAfterSeconds = status === 429 || status === 503 ? 1 : undefined, afterApplying = false, message = 'answered as the test asked', match = () => true } = {}) => {
      for (let i = 0; i < n; i++) failures.push({ status, retryAfterSeconds, afterApplying, message, match });
    },
    delayMs: 0,
    repeatedRevision: 'replay',
    tokenLifetimeSeconds: options.tokenLifetimeSeconds ?? 3600,
  };

  const error = (status: number, code: string, message: string) => ({ status, body: { status_code: status, error: code, code, message } });

  function signLog(clientSerial: string, number: number, processType: string, processData: string) {
    counter += 1;
    const timestamp = Math.floor(Date.now() / 1000);
    const message = signedMessage({ clientSerialNumber: clientSerial, transactionNumber: number, counter, timestamp: String(timestamp), processType, processData });
    const value = sign('sha256', Buffer.from(message), { key: privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64');
    return { timestamp, signature: { value, algorithm: 'ecdsa-plain-SHA256', counter, public_key: tss.publicKey } };
  }

  function upsert(txId: string, revision: number, raw: string): { status: number; body: unknown } {
    const body = JSON.parse(raw || '{}') as { state?: string; client_id?: string; schema?: { standard_v1?: { receipt?: Record<string, unknown> } } };
    const client = body.client_id ? clients.get(body.client_id) : undefined;
    if (!client) return error(400, 'E_CLIENT_NOT_FOUND', 'client not found');
    const existing = transactions.get(txId);
    const stored = existing?.revisions[revision - 1];
    if (stored) {
      if (standIn.repeatedRevision === 'conflict') return error(409, 'E_PENDING_TX_CONFLICT', 'a transaction with this tx_id already exists');
      return stored.body === raw ? { status: 200, body: stored.answer } : error(409, 'E_PENDING_TX_CONFLICT', 'revision exists with another body');
    }
    if (revision !== (existing?.revisions.length ?? 0) + 1) return error(400, 'E_TX_REVISION_NOT_FOUND', `no revision ${revision - 1} to follow`);
    if (revision === 1 && body.state !== 'ACTIVE') return error(400, 'E_TX_UPSERT', 'a transaction starts ACTIVE');
    if (!['ACTIVE', 'FINISHED', 'CANCELLED'].includes(body.state ?? '')) return error(400, 'E_FAILED_SCHEMA_VALIDATION', 'state');
    let processType = '';
    let processData = '';
    const receipt = body.schema?.standard_v1?.receipt;
    if (revision > 1) {
      if (!receipt || typeof receipt.receipt_type !== 'string' || !BonTypes[receipt.receipt_type]) return error(400, 'E_FAILED_SCHEMA_VALIDATION', 'schema.standard_v1.receipt.receipt_type');
      const vat = receipt.amounts_per_vat_rate as Array<{ vat_rate: string; amount: string }> | undefined;
      const pay = (receipt.amounts_per_payment_type ?? []) as Array<{ payment_type: string; amount: string; currency_code?: string }>;
      if (!Array.isArray(vat) || [...vat, ...pay].some((a) => !Amount.test(a.amount))) return error(400, 'E_FAILED_SCHEMA_VALIDATION', 'amount must match ^-?\\d+(\\.\\d{2,5})$');
      const grosses = VatRates.map((rate) => vat.find((a) => a.vat_rate === rate)?.amount ?? '0.00');
      const payments = pay.map((p) => `${p.amount}:${p.payment_type === 'CASH' ? 'Bar' : 'Unbar'}${p.currency_code && p.currency_code !== 'EUR' ? `:${p.currency_code}` : ''}`);
      processType = 'Kassenbeleg-V1';
      processData = `${BonTypes[receipt.receipt_type]}^${grosses.join('_')}^${payments.join('_')}`;
    }
    const tx: Transaction = existing ?? { number: ++txNumber, clientId: body.client_id!, timeStart: Math.floor(Date.now() / 1000), revisions: [] };
    transactions.set(txId, tx);
    const log = signLog(client.serial, tx.number, processType, processData);
    const ended = body.state !== 'ACTIVE';
    const iso = (s: number) => new Date(s * 1000).toISOString();
    const answer: Record<string, unknown> = {
      _id: txId, _type: 'TRANSACTION', _env: 'TEST', _version: '2.1.35', tss_id: tss.id, state: body.state, client_id: body.client_id, revision, latest_revision: revision,
      number: tx.number, time_start: tx.timeStart, client_serial_number: client.serial, tss_serial_number: tss.serial,
      ...(receipt ? { schema: { standard_v1: { receipt } } } : {}),
      log: { operation: revision === 1 ? 'Start' : ended ? 'Finish' : 'Update', timestamp: log.timestamp, timestamp_format: 'unixTime' },
      signature: log.signature,
      ...(ended
        ? {
            time_end: log.timestamp,
            qr_code_data: ['V0', client.serial, processType, processData, tx.number, log.signature.counter, iso(tx.timeStart), iso(log.timestamp), 'ecdsa-plain-SHA256', 'unixTime', log.signature.value, tss.publicKey].join(';'),
          }
        : {}),
    };
    tx.revisions.push({ state: body.state!, body: raw, answer });
    for (const other of tx.revisions) other.answer.latest_revision = revision;
    return { status: 200, body: answer };
  }

  function route(method: string, path: string, query: URLSearchParams, token: string | undefined, raw: string): { status: number; body: unknown } {
    if (method === 'POST' && path === '/auth') {
      const body = JSON.parse(raw || '{}') as { api_key?: string; api_secret?: string };
      if (body.api_key !== standIn.apiKey || body.api_secret !== standIn.apiSecret) return error(401, 'E_UNAUTHORIZED', 'api_key or api_secret is wrong');
      const issued = randomUUID();
      tokens.set(issued, Date.now() + standIn.tokenLifetimeSeconds * 1000);
      const expiresAt = Math.floor(Date.now() / 1000) + standIn.tokenLifetimeSeconds;
      return { status: 200, body: { access_token: issued, access_token_claims: { env: 'TEST' }, access_token_expires_in: standIn.tokenLifetimeSeconds, access_token_expires_at: expiresAt } };
    }
    if (!token || (tokens.get(token) ?? 0) <= Date.now()) return error(401, 'E_UNAUTHORIZED', 'the access token is missing or expired');
    const parts = path.split('/').filter(Boolean);
    if (parts[0] !== 'tss' || parts[1] !== tss.id) return error(404, 'E_TSS_NOT_FOUND', 'no such TSS');
    const [, , kind, id, action] = parts;
    if (method === 'GET' && !kind) {
      return { status: 200, body: { _id: tss.id, _type: 'TSS', _env: 'TEST', _version: '2.1.35', state: 'INITIALIZED', serial_number: tss.serial, public_key: tss.publicKey, certificate: tss.certificate, signature_algorithm: 'ecdsa-plain-SHA256', signature_timestamp_format: 'unixTime', transaction_data_encoding: 'UTF-8', signature_counter: String(counter), transaction_counter: String(txNumber) } };
    }
    if (method === 'POST' && kind === 'admin' && id === 'auth') {
      const body = JSON.parse(raw || '{}') as { admin_pin?: string };
      if (body.admin_pin !== standIn.adminPin) return error(401, 'E_UNAUTHORIZED', 'the admin_pin is wrong');
      adminSessions.add(token);
      return { status: 200, body: {} };
    }
    if (method === 'POST' && kind === 'admin' && id === 'logout') {
      adminSessions.delete(token);
      return { status: 200, body: {} };
    }
    if (kind === 'client' && id && !action) {
      const client = clients.get(id);
      const answer = (c: { serial: string }) => ({ _id: id, _type: 'CLIENT', _env: 'TEST', _version: '2.1.35', tss_id: tss.id, serial_number: c.serial, state: 'REGISTERED', time_creation: 0 });
      if (method === 'GET') return client ? { status: 200, body: answer(client) } : error(404, 'E_CLIENT_NOT_FOUND', 'no such client');
      if (method === 'PUT') {
        // The stand-in's guess at fiskaly's answer without an admin login (the OpenAPI does not say which).
        if (!adminSessions.has(token)) return error(401, 'E_UNAUTHORIZED', 'createClient requires admin authentication');
        if (client) return error(409, 'E_CLIENT_CONFLICT', 'a client with the specified client_id already exists');
        const serial = (JSON.parse(raw || '{}') as { serial_number?: string }).serial_number ?? '';
        if (!ClientSerial.test(serial)) return error(400, 'E_ILLEGAL_CLIENT_SERIAL', 'serial_number must match ^[A-Za-z0-9 \'()+,-.:=?]{1,70}$ (no slash, no underscore)');
        clients.set(id, { serial, created: 1 });
        return { status: 200, body: answer({ serial }) };
      }
    }
    if (kind === 'tx' && id && !action) {
      const revision = Number(query.get('tx_revision') ?? NaN);
      if (method === 'PUT') {
        if (!Number.isInteger(revision) || revision < 1) return error(400, 'E_FAILED_SCHEMA_VALIDATION', 'tx_revision');
        return upsert(id, revision, raw);
      }
      if (method === 'GET') {
        const tx = transactions.get(id);
        if (!tx) return error(404, 'E_TX_NOT_FOUND', 'no such transaction');
        const stored = tx.revisions[(Number.isInteger(revision) ? revision : tx.revisions.length) - 1];
        return stored ? { status: 200, body: stored.answer } : error(400, 'E_TX_REVISION_NOT_FOUND', 'no such revision');
      }
    }
    return error(404, 'E_NOT_FOUND', `${method} ${path}`);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const method = req.method ?? 'GET';
    const path = url.pathname.replace(/^\/api\/v2/, '');
    if (method === 'PUT' && /^\/tss\/[^/]+\/tx\/[^/]+$/.test(path)) {
      const key = `${path.split('/')[4]}#${url.searchParams.get('tx_revision')}`;
      putCalls.set(key, (putCalls.get(key) ?? 0) + 1);
    }
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const failureAt = failures.findIndex((f) => f.match(method, path));
    const failure = failureAt >= 0 ? failures.splice(failureAt, 1)[0] : undefined;
    let answer = failure && !failure.afterApplying ? undefined : route(method, path, url.searchParams, token, Buffer.concat(chunks).toString());
    if (failure) answer = error(failure.status, 'E_STAND_IN', failure.message);
    if (standIn.delayMs > 0) await new Promise((r) => setTimeout(r, standIn.delayMs));
    standIn.calls.push({ method, path, status: answer!.status });
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (failure?.retryAfterSeconds !== undefined) headers['retry-after'] = String(failure.retryAfterSeconds);
    res.writeHead(answer!.status, headers).end(JSON.stringify(answer!.body));
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => res.writeHead(500).end(JSON.stringify({ status_code: 500, message: String(err) })));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  standIn.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v2`;
  t.teardown(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return standIn;
}
