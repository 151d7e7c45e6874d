import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError, type Config } from '../config.js';

export interface SigningSecret {
  /** HS256 secret, when tokens may be signed with one. */
  secret?: string;
  /** Set when the secret came from (or was just written to) the data directory. */
  generated?: { file: string; created: boolean };
}

/**
 * JWT_SECRET when set. Outside production, with neither JWT_SECRET nor JWKS_URL, a secret is
 * generated once into the data directory so that the service and `npm run token` agree on it.
 */
export async function resolveSigningSecret(config: Config): Promise<SigningSecret> {
  if (config.auth.jwtSecret) return { secret: config.auth.jwtSecret };
  if (config.auth.jwksUrl) return {};
  if (config.env === 'production') throw new ConfigError('set JWT_SECRET or JWKS_URL: production never generates a secret');
  const file = path.resolve(config.dataDir, 'jwt-secret');
  if (existsSync(file)) return { secret: await readSecret(file), generated: { file, created: false } };
  await mkdir(path.dirname(file), { recursive: true });
  try {
    await writeFile(file, `${randomBytes(48).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    // Another process won the race to create it; the file is the truth either way.
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new Error(`cannot write ${file}`, { cause: err });
  }
  return { secret: await readSecret(file), generated: { file, created: true } };
}

async function readSecret(file: string): Promise<string> {
  return (await readFile(file, 'utf8')).trim();
}
