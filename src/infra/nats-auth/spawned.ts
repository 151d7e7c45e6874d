import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { KeyRing } from '../../secrets/key-ring.js';
import { writePrivate } from '../private-file.js';
import { ensureNatsAuth, type NatsAuthFolder } from './authority-file.js';
import { natsServerConfig } from './server-config.js';

/**
 * `npm start`'s NATS trust when NATS_URL is unset: the authority and the role credentials under
 * DATA_DIR/nats-auth (made on the first start, kept after), and the spawned nats-server's
 * configuration beside its store (DATA_DIR/nats/server.conf, its resolver's accounts in
 * DATA_DIR/nats/accounts). A connection without a user of the platform's operator is refused.
 */
export async function prepareSpawnedTrust(
  dataDir: string,
  ring: KeyRing,
  options: { tls?: { certFile: string; keyFile: string } } = {},
): Promise<{ folder: NatsAuthFolder; configFile: string }> {
  const folder = await ensureNatsAuth(path.join(dataDir, 'nats-auth'), ring);
  const natsDir = path.resolve(dataDir, 'nats');
  const resolverDir = path.join(natsDir, 'accounts');
  await mkdir(resolverDir, { recursive: true, mode: 0o700 });
  const configFile = path.join(natsDir, 'server.conf');
  await writePrivate(configFile, natsServerConfig(folder.authority, { resolverDir, ...(options.tls ? { tls: options.tls } : {}) }));
  return { folder, configFile };
}
