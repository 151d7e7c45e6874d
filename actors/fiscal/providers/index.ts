import type { Sql } from '../../../src/infra/postgres.js';
import type { FiscalizationSettings } from '../../../subjects/fiscal.js';
import type { FiscalProviderSource } from '../handler.js';
import type { TseProvider } from '../provider.js';
import { createLocalProvider, type LocalProvider } from './local.js';

/**
 * The providers a worker process signs with, by name. `local` is one instance for every project
 * (its keys are per project); `fiskaly` is made per project from its settings by `fiskaly`, when
 * this build has it. `wrap` lets a test put itself between the jobs and a provider (to make the
 * TSE unreachable, say) without touching the database or the broker.
 */
export interface ProviderOptions {
  sql: Sql;
  fiskaly?: (project: string, settings: FiscalizationSettings | undefined) => TseProvider;
  wrap?: (provider: TseProvider, project: string) => TseProvider;
}

export function createProviderSource(options: ProviderOptions): { source: FiscalProviderSource; local: LocalProvider } {
  const local = createLocalProvider({ sql: options.sql });
  const wrap = options.wrap ?? ((provider: TseProvider) => provider);
  const source: FiscalProviderSource = (name, project, settings) => {
    if (name === 'local') return wrap(local, project);
    if (name === 'fiskaly' && options.fiskaly) return wrap(options.fiskaly(project, settings), project);
    return undefined;
  };
  return { source, local };
}
