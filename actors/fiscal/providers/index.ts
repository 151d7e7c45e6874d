import { createHash } from 'node:crypto';
import type { Sql } from '../../../src/infra/postgres.js';
import type { Logger } from '../../../src/logger.js';
import type { OutgoingHttp } from '../../../src/infra/outgoing-http.js';
import { missingFiscalFields, type FiscalizationSettings } from '../../../subjects/fiscal.js';
import type { FiscalProviderSource } from '../handler.js';
import type { TseProvider } from '../provider.js';
import { createFiskalyProvider } from './fiskaly.js';
import { createLocalProvider, type LocalProvider } from './local.js';
import { openFiscalSecrets } from '../../settings/secrets.js';
import { UnreadableSecretError, type KeyRing } from '../../../src/secrets/key-ring.js';

/**
 * The providers a worker process signs with, by name. `local` is one instance for every project
 * (its keys are per project); `fiskaly` is made per project from its settings (by default
 * fiskalyFromSettings: one provider per project, kept while its settings stay the same, so its
 * token and its registered clients are reused). `wrap` lets a test put itself between the jobs and a provider (to make the
 * TSE unreachable, say) without touching the database or the broker.
 */
export interface ProviderOptions {
  sql: Sql;
  log: Logger;
  /** Opens the TSE secrets the settings keep sealed (actors/settings/secrets.ts). */
  secrets: KeyRing;
  /** How long one call to fiskaly may take. */
  timeoutMs: number;
  /** The client fiskaly's calls go through (src/infra/outgoing-http.ts). */
  http: OutgoingHttp;
  fiskaly?: (project: string, settings: FiscalizationSettings | undefined) => TseProvider;
  wrap?: (provider: TseProvider, project: string) => TseProvider;
}

export function createProviderSource(options: ProviderOptions): { source: FiscalProviderSource; local: LocalProvider } {
  const local = createLocalProvider({ sql: options.sql });
  const wrap = options.wrap ?? ((provider: TseProvider) => provider);
  const fiskaly = options.fiskaly ?? fiskalyFromSettings(options);
  const source: FiscalProviderSource = (name, project, settings) => {
    if (name === 'local') return wrap(local, project);
    if (name === 'fiskaly') return wrap(fiskaly(project, settings), project);
    return undefined;
  };
  return { source, local };
}

export const FiskalyDefaultBaseUrl = 'https://kassensichv-middleware.fiskaly.com/api/v2';

/** What a fiskaly provider is made of; a new one is made when any of it changes. */
function fingerprint(settings: FiscalizationSettings | undefined): string {
  const { tssId, apiKey, apiSecret, adminPin, baseUrl } = settings ?? {};
  return createHash('sha256').update(JSON.stringify([tssId, apiKey, apiSecret, adminPin, baseUrl])).digest('hex');
}

/**
 * fiskaly providers made from the projects' settings. A project whose settings lack the TSS or the
 * credentials gets a provider that refuses every call (`failed`: the sale is recorded as a TSE
 * outage at once and the log line says what is missing), never one that signs nothing silently.
 */
function fiskalyFromSettings(options: Pick<ProviderOptions, 'log' | 'timeoutMs' | 'secrets' | 'http'>): (project: string, settings: FiscalizationSettings | undefined) => TseProvider {
  const made = new Map<string, { fingerprint: string; provider: TseProvider }>();
  return (project, settings) => {
    // The fingerprint is of the settings as stored (sealed): the secrets are opened only for a new provider.
    const key = fingerprint(settings);
    const known = made.get(project);
    if (known?.fingerprint === key) return known.provider;
    const provider = makeFiskaly(project, settings, options);
    made.set(project, { fingerprint: key, provider });
    return provider;
  };
}

function makeFiskaly(project: string, stored: FiscalizationSettings | undefined, options: Pick<ProviderOptions, 'log' | 'timeoutMs' | 'secrets' | 'http'>): TseProvider {
  let settings: FiscalizationSettings | undefined;
  try {
    settings = stored && openFiscalSecrets(project, stored, options.secrets);
  } catch (err) {
    if (!(err instanceof UnreadableSecretError)) throw err;
    options.log.error({ project, keyId: err.keyId }, 'the TSE secrets of a project cannot be opened with SECRETS_KEY: its sales are recorded as TSE outages');
    return misconfigured(`the TSE secrets cannot be opened: ${err.message}`);
  }
  const { tssId, apiKey, apiSecret, adminPin, baseUrl } = settings ?? {};
  return tssId && apiKey && apiSecret
    ? createFiskalyProvider({ baseUrl: baseUrl ?? FiskalyDefaultBaseUrl, apiKey, apiSecret, adminPin, tssId, timeoutMs: options.timeoutMs, http: options.http, log: options.log.child({ project, tse: 'fiskaly' }) })
    : misconfigured(`the fiscalization settings name provider fiskaly without ${missingFiscalFields({ ...settings, provider: 'fiskaly' }).map((m) => m.field).join(', ')}`);
}

function misconfigured(reason: string): TseProvider {
  return { name: 'fiskaly', start: async () => ({ kind: 'failed', reason }), finish: async () => ({ kind: 'failed', reason }) };
}
