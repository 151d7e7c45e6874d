import type { Sql } from '../../src/infra/postgres.js';
import { route, type Route } from '../../src/messaging/worker.js';
import { AppError } from '../../src/errors.js';
import { FiscalSecrets, fiscalizationView, missingFiscalFields, type FiscalizationSettings } from '../../subjects/fiscal.js';
import { settings } from '../../subjects/settings.js';
import { readFiscalization, readSettings, writeSettings } from './sql.js';
import { sealFiscalSecrets } from './secrets.js';
import type { KeyRing } from '../../src/secrets/key-ring.js';

export function createSettingsActor(deps: { sql: Sql; secrets: KeyRing }): Route[] {
  const { sql, secrets } = deps;
  // The TSE secrets are write-only: answers carry whether they are set, never them.
  const withFiscalization = (stored: FiscalizationSettings | undefined) => (stored ? { fiscalization: fiscalizationView(stored) } : {});
  return [
    route(settings.get, async ({ project }) => {
      const [{ fiscalization: _none, ...stored }, fiscalization] = await Promise.all([readSettings(sql, project), readFiscalization(sql, project)]);
      return { project, ...stored, ...withFiscalization(fiscalization) };
    }),
    route(settings.put, async ({ project, settings: next }) => {
      if (next.fiscalization) await refuseIncompleteChoice(next.fiscalization, () => readFiscalization(sql, project));
      const { fiscalization: _written, ...rest } = next;
      const fiscalization = await writeSettings(sql, project, next.fiscalization ? { ...next, fiscalization: sealFiscalSecrets(project, next.fiscalization, secrets) } : next);
      return { project, ...rest, ...withFiscalization(fiscalization) };
    }),
  ];
}

/**
 * A TSE choice its provider cannot sign with (fiskaly without its TSS, key or secret) is refused,
 * one detail per field, before anything is written. The secrets may come from the stored choice (a
 * PUT without them keeps them); the TSS id is named in every PUT, like the provider.
 */
async function refuseIncompleteChoice(choice: FiscalizationSettings, stored: () => Promise<FiscalizationSettings | undefined>): Promise<void> {
  if (!missingFiscalFields(choice).length) return;
  const kept = await stored();
  const secrets = Object.fromEntries(FiscalSecrets.flatMap((key) => (kept?.[key] ? [[key, kept[key]]] : [])));
  const missing = missingFiscalFields({ ...secrets, ...choice });
  if (!missing.length) return;
  throw AppError.badRequest(
    `invalid settings: fiscalization provider ${choice.provider} needs ${missing.map((m) => m.what).join(', ')}`,
    missing.map(({ field, what }) => ({ type: 'invalid_field', code: 'missing', path: `fiscalization.${field}`, message: `${choice.provider} needs ${what}` })),
  );
}
