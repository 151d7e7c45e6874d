import type { Sql } from '../../src/infra/postgres.js';
import { route, type Route } from '../../src/messaging/worker.js';
import { fiscal, type FiscalProvider, type FiscalRegisters } from '../../subjects/fiscal.js';
import { readFiscalization } from '../settings/sql.js';
import type { LocalProvider } from './providers/local.js';
import * as db from './sql.js';

/**
 * What a retailer registers with the tax office (§ 146a Abs. 4 AO): the TSE in force and the cash
 * registers, one per shop (the shop id is the register's serial, as the TSE and DSFinV-K know it).
 */
export function createFiscalActor(deps: { sql: Sql; local: LocalProvider; defaultProvider: FiscalProvider | null }): Route[] {
  const { sql, local } = deps;
  return [
    route(fiscal.registers, async ({ project }): Promise<FiscalRegisters> => {
      const [settings, shops] = await Promise.all([readFiscalization(sql, project), db.listShops(sql, project)]);
      const provider = settings?.provider ?? deps.defaultProvider;
      let tse: FiscalRegisters['tse'] = null;
      if (provider === 'local' || provider === 'fiskaly') {
        const device = provider === 'local' ? await local.device(project) : await db.lastDevice(sql, project, provider);
        if (device) {
          const { serialNumber, signatureAlgorithm, logTimeFormat, publicKey } = device;
          tse = { provider, serialNumber, signatureAlgorithm, logTimeFormat, publicKey, certified: provider !== 'local' };
        }
      }
      return {
        provider,
        ...(provider === 'none' && settings?.reason ? { reason: settings.reason } : {}),
        tse,
        cashRegisters: shops.map((s) => ({ serialNumber: s.id, shopID: s.id, name: s.name, address: { street: s.street, zip: s.zip, city: s.city, country: s.country } })),
      };
    }),
  ];
}
