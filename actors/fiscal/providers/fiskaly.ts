import type { z } from 'zod';
import type { Logger } from '../../../src/logger.js';
import { FiscalProcessTypes, type SecurityDeviceModule } from '../../../subjects/fiscal.js';
import type { FinishRequest, FinishedTransaction, ProviderResult, SignedLog, StartedTransaction, TransactionAddress, TseProvider } from '../provider.js';
import { isRecord, tryParseJson } from '../../../subjects/formats/json.js';
import { AuthAnswer, ErrorAnswer, pemOf, receiptOf, signedProcessOf, TssAnswer, TxAnswer } from './fiskaly-api.js';
import { causeOf, header, retryAfterMs, send, type HttpAnswer, type OutgoingHttp } from '../../../src/infra/outgoing-http.js';

/**
 * The fiskaly provider: the cloud TSE of fiskaly SIGN DE API v2 (shapes and their sources in
 * fiskaly-api.ts). One provider per project (its TSS and credentials); it keeps in memory what
 * fiskaly has already told it (the access token, the TSS's device data, the clients it registered).
 *
 * A transaction is `PUT /tss/{tss}/tx/{tx}?tx_revision=n`: 1 starts it, 2 finishes it. fiskaly's
 * API is idempotent ("Idempotent Requests": the same request again starts only one transaction),
 * and when it answers 409 for a revision that exists already, the revision is read back: a
 * retried call answers the same signature and counter, never a second one.
 */
export interface FiskalyProviderOptions {
  /** fiskaly's API with its version, such as https://kassensichv-middleware.fiskaly.com/api/v2 (no default). */
  baseUrl: string;
  apiKey: string;
  /** Write-only: never logged, never in a result's reason. */
  apiSecret: string;
  /** The TSS admin PIN, needed to register a TSE client (createClient "Requires Admin Authentication"). Write-only. */
  adminPin?: string;
  tssId: string;
  /** Per HTTP call, answer included. */
  timeoutMs: number;
  /** The client the calls go through (src/infra/outgoing-http.ts), shared by the process's fiskaly providers. */
  http: OutgoingHttp;
  log: Logger;
}

type Step<T> = { kind: 'ok'; value: T } | { kind: 'unauthorized'; reason: string } | { kind: 'retry'; reason: string; afterMs?: number } | { kind: 'failed'; reason: string };
type Stop = Exclude<Step<never>, { kind: 'ok' }>;

const ok = <T>(value: T): { kind: 'ok'; value: T } => ({ kind: 'ok', value });

export function createFiskalyProvider(options: FiskalyProviderOptions): TseProvider {
  const { tssId, timeoutMs, log } = options;
  const base = options.baseUrl.replace(/\/+$/, '');
  const tssPath = `/tss/${encodeURIComponent(tssId)}`;

  let session: { token: string; renewAt: number } | undefined;
  // The last few tokens, so a late answer that echoes a replaced one is still redacted.
  const recentTokens: string[] = [];
  let authenticating: Promise<Step<string>> | undefined;
  let device: SecurityDeviceModule | undefined;
  let deviceAsked: Promise<Step<SecurityDeviceModule>> | undefined;
  const registeredClients = new Set<string>();
  // Admin logins of a TSS are one session: registrations run one after another, so one's logout never ends another's login.
  let adminQueue: Promise<unknown> = Promise.resolve();
  let adminPinRefused = false;

  /** Secrets never leave the provider, even when fiskaly's own text repeats one. */
  function scrub(text: string): string {
    let clean = text;
    for (const secret of [options.apiSecret, options.adminPin, ...recentTokens]) {
      if (secret && secret.length >= 4) clean = clean.split(secret).join('[redacted]');
    }
    return clean;
  }

  async function call(method: 'GET' | 'POST' | 'PUT', path: string, token: string | undefined, body?: unknown): Promise<HttpAnswer | Stop> {
    const headers: Record<string, string> = { accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) };
    if (token) headers.authorization = `Bearer ${token}`;
    try {
      return await send(options.http, new URL(`${base}${path}`), method, headers, body === undefined ? undefined : JSON.stringify(body), timeoutMs);
    } catch (err) {
      const timedOut = err instanceof Error && err.name === 'TimeoutError';
      return { kind: 'retry', reason: timedOut ? `fiskaly gave no answer within ${timeoutMs} ms` : `fiskaly cannot be reached (${scrub(causeOf(err))})` };
    }
  }

  /** fiskaly's status codes as its "Errors and Status Codes" section explains them. */
  function classify<T>(answer: HttpAnswer, what: string, parse: (json: unknown) => Step<T>): Step<T> {
    const { status, text } = answer;
    if (status >= 200 && status < 300) return parse(tryParseJson(text));
    // 499: "the client connection was closed prematurely, this request can, and should, be retried".
    if (status >= 500 || status === 429 || status === 499) {
      return { kind: 'retry', reason: `fiskaly answered ${status} to ${what}${errorText(text)}`, afterMs: retryAfterMs(header(answer, 'retry-after')) };
    }
    const reason = `fiskaly answered ${status} to ${what}${errorText(text)}`;
    return status === 401 ? { kind: 'unauthorized', reason } : { kind: 'failed', reason };
  }

  function errorText(text: string): string {
    const parsed = ErrorAnswer.safeParse(tryParseJson(text));
    if (!parsed.success) return '';
    const { code, message, error } = parsed.data;
    const said = [code, message ?? error].filter(Boolean).join(': ');
    return said ? ` (${scrub(said).slice(0, 500)})` : '';
  }

  function parsed<T>(schema: z.ZodType<T>, what: string) {
    return (json: unknown): Step<T> => {
      const result = schema.safeParse(json);
      if (result.success) return ok(result.data);
      const issue = result.error.issues[0];
      return { kind: 'failed', reason: `fiskaly's answer to ${what} is not what its API documents${issue ? ` (${issue.path.join('.')}: ${issue.message})` : ''}` };
    };
  }

  async function authenticate(): Promise<Step<string>> {
    const answer = await call('POST', '/auth', undefined, { api_key: options.apiKey, api_secret: options.apiSecret });
    if ('kind' in answer) return answer;
    const step = classify(answer, 'POST /auth', parsed(AuthAnswer, 'POST /auth'));
    // A 401 here is the key and secret themselves: asking again cannot help.
    if (step.kind !== 'ok') return step.kind === 'unauthorized' ? { kind: 'failed', reason: step.reason } : step;
    const { access_token: token, access_token_expires_in: expiresIn, access_token_expires_at: expiresAt } = step.value;
    const now = Date.now();
    // expires_in first: it does not depend on this machine's clock agreeing with fiskaly's.
    const lifetimeMs = expiresIn !== undefined ? expiresIn * 1000 : expiresAt !== undefined ? expiresAt * 1000 - now : undefined;
    // Renew a little before the expiry (a tenth of the lifetime, at most a minute) so a call rarely meets a 401; without an expiry, the 401 tells.
    const renewAt = lifetimeMs === undefined ? Number.POSITIVE_INFINITY : now + lifetimeMs - Math.min(60_000, lifetimeMs / 10);
    session = { token, renewAt };
    recentTokens.unshift(token);
    recentTokens.length = Math.min(recentTokens.length, 3);
    log.debug({ tssId, renewInMs: Number.isFinite(renewAt) ? Math.round(renewAt - now) : null }, 'fiskaly access token issued');
    return ok(token);
  }

  function accessToken(): Promise<Step<string>> {
    if (session && Date.now() < session.renewAt) return Promise.resolve(ok(session.token));
    // Concurrent calls share one POST /auth.
    authenticating ??= authenticate().finally(() => (authenticating = undefined));
    return authenticating;
  }

  /** Runs `work` with a token; after a 401, once more with a new token. A second 401 is final. */
  async function authorized<T>(work: (token: string) => Promise<Step<T>>): Promise<ProviderResult<T>> {
    for (let attempt = 1; ; attempt++) {
      const token = await accessToken();
      if (token.kind !== 'ok') return result(token);
      const step = await work(token.value);
      if (step.kind !== 'unauthorized') return result(step);
      if (attempt === 2) return { kind: 'failed', reason: step.reason };
      log.info({ tssId }, 'fiskaly answered 401: authenticating again');
      if (session?.token === token.value) session = undefined;
    }
  }

  function result<T>(step: Step<T>): ProviderResult<T> {
    if (step.kind === 'ok') return { kind: 'signed', value: step.value };
    if (step.kind === 'unauthorized') return { kind: 'failed', reason: step.reason };
    return step;
  }

  /** The TSS's device, asked for once: the starts of a first batch, side by side, share one GET. */
  function deviceOf(token: string): Promise<Step<SecurityDeviceModule>> {
    if (device) return Promise.resolve(ok(device));
    deviceAsked ??= askDevice(token).finally(() => (deviceAsked = undefined));
    return deviceAsked;
  }

  async function askDevice(token: string): Promise<Step<SecurityDeviceModule>> {
    const answer = await call('GET', tssPath, token);
    if ('kind' in answer) return answer;
    const step = classify(answer, `GET ${tssPath}`, parsed(TssAnswer, `GET ${tssPath}`));
    if (step.kind !== 'ok') return step;
    const tss = step.value;
    device = {
      serialNumber: tss.serial_number,
      signatureAlgorithm: tss.signature_algorithm,
      logTimeFormat: tss.signature_timestamp_format,
      certificate: pemOf(tss.certificate),
      publicKey: tss.public_key,
    };
    return ok(device);
  }

  function clientOf(token: string, tx: TransactionAddress): Promise<Step<void>> {
    if (registeredClients.has(tx.clientId)) return Promise.resolve(ok(undefined));
    const run = adminQueue.then(() => registerClient(token, tx));
    adminQueue = run.catch(() => undefined);
    return run;
  }

  async function registerClient(token: string, tx: TransactionAddress): Promise<Step<void>> {
    if (registeredClients.has(tx.clientId)) return ok(undefined);
    const clientPath = `${tssPath}/client/${encodeURIComponent(tx.clientId)}`;
    // Ask first: after a restart the client usually exists, and an admin login is a system log on the TSS.
    const existing = await call('GET', clientPath, token);
    if ('kind' in existing) return existing;
    if (existing.status !== 404) {
      const step = classify(existing, `GET ${clientPath}`, (json) => ok(isRecord(json) ? json.state : undefined));
      if (step.kind !== 'ok') return step;
      if (step.value !== 'REGISTERED') return { kind: 'failed', reason: `the fiskaly client of ${tx.clientSerialNumber} is ${String(step.value)}, not REGISTERED` };
      registeredClients.add(tx.clientId);
      return ok(undefined);
    }
    if (options.adminPin) {
      if (adminPinRefused) return { kind: 'failed', reason: 'fiskaly refused the admin PIN before: not trying it again (five wrong attempts block it)' };
      const login = await call('POST', `${tssPath}/admin/auth`, token, { admin_pin: options.adminPin });
      if ('kind' in login) return login;
      const loggedIn = classify(login, `POST ${tssPath}/admin/auth`, () => ok(undefined));
      if (loggedIn.kind === 'unauthorized') {
        // A 401 here is the PIN: authenticating again would spend another of its five attempts.
        adminPinRefused = true;
        return { kind: 'failed', reason: loggedIn.reason };
      }
      if (loggedIn.kind !== 'ok') return loggedIn;
    }
    try {
      const created = await call('PUT', clientPath, token, { serial_number: tx.clientSerialNumber });
      if ('kind' in created) return created;
      // 409 E_CLIENT_CONFLICT: "a client with the specified client_id already exists": ours, registered by an earlier attempt.
      const step = created.status === 409 ? ok(undefined) : classify(created, `PUT ${clientPath}`, () => ok(undefined));
      if (step.kind !== 'ok') return step;
      registeredClients.add(tx.clientId);
      log.info({ tssId, clientId: tx.clientId, clientSerialNumber: tx.clientSerialNumber }, 'fiskaly client registered');
      return ok(undefined);
    } finally {
      if (options.adminPin) {
        // "Log out as soon as you have finished making administrative changes"; safe without a login.
        const logout = await call('POST', `${tssPath}/admin/logout`, token, {});
        if ('kind' in logout || logout.status >= 300) log.warn({ tssId, status: 'kind' in logout ? logout.reason : logout.status }, 'fiskaly admin logout failed');
      }
    }
  }

  async function upsert(token: string, tx: TransactionAddress, revision: number, body: Record<string, unknown>, state: TxAnswer['state']): Promise<Step<TxAnswer>> {
    const path = `${tssPath}/tx/${encodeURIComponent(tx.transactionId)}?tx_revision=${revision}`;
    const what = `PUT tx revision ${revision}`;
    const answer = await call('PUT', path, token, body);
    if ('kind' in answer) return answer;
    let step: Step<TxAnswer>;
    if (answer.status === 409) {
      // The revision exists already (an earlier attempt whose answer was lost): what it holds is the answer.
      log.info({ tssId, transactionId: tx.transactionId, revision }, 'fiskaly transaction revision exists: reading it back');
      const stored = await call('GET', path, token);
      if ('kind' in stored) return stored;
      step = classify(stored, `GET tx revision ${revision}`, parsed(TxAnswer, `GET tx revision ${revision}`));
    } else {
      step = classify(answer, what, parsed(TxAnswer, what));
    }
    if (step.kind !== 'ok') return step;
    if (step.value.state !== state || step.value.revision !== revision) {
      return { kind: 'failed', reason: `fiskaly's transaction revision ${step.value.revision} is ${step.value.state}, not the ${state} revision ${revision} asked for` };
    }
    return step;
  }

  function signedLog(tx: TxAnswer, process: { processType: string; processData: string }): SignedLog {
    return {
      timestamp: String(tx.log.timestamp),
      time: new Date(tx.log.timestamp * 1000).toISOString(),
      counter: tx.signature.counter,
      ...process,
      signature: tx.signature.value,
    };
  }

  function sameTss(tx: TransactionAddress): { kind: 'failed'; reason: string } | undefined {
    return tx.tssId === tssId ? undefined : { kind: 'failed', reason: `the transaction is for TSS ${tx.tssId}, this fiskaly provider for TSS ${tssId}` };
  }

  async function guarded<T>(what: string, tx: TransactionAddress, run: () => Promise<ProviderResult<T>>): Promise<ProviderResult<T>> {
    let outcome: ProviderResult<T>;
    try {
      outcome = await run();
    } catch (err) {
      outcome = { kind: 'failed', reason: `the fiskaly provider failed: ${scrub(causeOf(err))}` };
    }
    if (outcome.kind !== 'signed') {
      const reason = scrub(outcome.reason);
      outcome = { ...outcome, reason };
      log.warn({ tssId, transactionId: tx.transactionId, what, kind: outcome.kind, reason }, 'fiskaly signed nothing');
    }
    return outcome;
  }

  return {
    name: 'fiskaly',

    start(tx) {
      return guarded('start', tx, async () => {
        const wrong = sameTss(tx);
        if (wrong) return wrong;
        return authorized(async (token): Promise<Step<StartedTransaction>> => {
          const client = await clientOf(token, tx);
          if (client.kind !== 'ok') return client;
          const dev = await deviceOf(token);
          if (dev.kind !== 'ok') return dev;
          const started = await upsert(token, tx, 1, { state: 'ACTIVE', client_id: tx.clientId }, 'ACTIVE');
          if (started.kind !== 'ok') return started;
          // A start carries no process type or data (DSFinV-K; fiskaly's upsert description says the same).
          return ok({ device: dev.value, transactionNumber: started.value.number, log: signedLog(started.value, { processType: '', processData: '' }) });
        });
      });
    },

    finish(request: FinishRequest) {
      return guarded('finish', request, async () => {
        const wrong = sameTss(request);
        if (wrong) return wrong;
        if (request.processType !== FiscalProcessTypes.receipt) return { kind: 'failed', reason: `fiskaly's standard_v1 receipt signs ${FiscalProcessTypes.receipt}, not ${request.processType}` };
        const receipt = receiptOf(request.processData);
        if ('error' in receipt) return { kind: 'failed', reason: receipt.error };
        const { state, receipt: body } = receipt.body;
        return authorized(async (token): Promise<Step<FinishedTransaction>> => {
          const client = await clientOf(token, request);
          if (client.kind !== 'ok') return client;
          const dev = await deviceOf(token);
          if (dev.kind !== 'ok') return dev;
          const finished = await upsert(token, request, 2, { state, client_id: request.clientId, schema: { standard_v1: { receipt: body } } }, state);
          if (finished.kind !== 'ok') return finished;
          // What fiskaly signed, as its QR code data says; what was asked for when it gave none.
          const process = signedProcessOf(finished.value.qr_code_data) ?? { processType: request.processType, processData: request.processData };
          return ok({ device: dev.value, transactionNumber: finished.value.number, log: signedLog(finished.value, process) });
        });
      });
    },
  };
}
