import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError, type Config } from '../config.js';
import { writePrivate } from '../infra/private-file.js';
import { createKeyRing, parseKey, type KeyRing } from './key-ring.js';

/**
 * Secrets the service signs with. Each comes from its variable; outside production an unset one is
 * generated once into the data directory, so that a fresh start needs no setup and every process
 * sharing the directory (and `npm run token`) agrees on it. Production never generates a secret.
 */
export interface Secret {
  secret?: string;
  /** Set when the secret came from (or was just written to) the data directory. */
  generated?: { file: string; created: boolean };
}

/** The HS256 secret of bearer tokens (JWT_SECRET); none when only JWKS_URL verifies tokens. */
export async function resolveJwtSecret(config: Config): Promise<Secret> {
  if (config.auth.jwtSecret) return { secret: config.auth.jwtSecret };
  if (config.auth.jwksUrl) return {};
  if (config.env === 'production') throw new ConfigError('set JWT_SECRET or JWKS_URL: production never generates a secret');
  return fromDataDir(config.dataDir, 'jwt-secret');
}

/** The key checkout infos are signed and verified with (CHECKOUT_SIGNING_SECRET). */
export async function resolveCheckoutSecret(config: Config): Promise<Secret & { secret: string }> {
  if (config.checkout.signingSecret) return { secret: config.checkout.signingSecret };
  if (config.env === 'production') throw new ConfigError('set CHECKOUT_SIGNING_SECRET: production never generates a secret');
  return fromDataDir(config.dataDir, 'checkout-signing-secret');
}

/**
 * The key ring secrets are sealed with at rest (key-ring.ts): SECRETS_KEY, and SECRETS_KEY_PREVIOUS
 * to open what the key before sealed. Outside production an unset SECRETS_KEY is generated once
 * into the data directory (`secrets-key`); production never generates one.
 */
export async function resolveKeyRing(config: Config): Promise<{ ring: KeyRing; generated?: Secret['generated'] }> {
  const previous = config.secrets.previousKey ? [parseKey(config.secrets.previousKey)] : [];
  if (config.secrets.key) return { ring: createKeyRing(parseKey(config.secrets.key), previous) };
  if (config.env === 'production') throw new ConfigError('set SECRETS_KEY (openssl rand -base64 32): production never generates the key secrets are sealed with');
  const { secret, generated } = await fromDataDir(config.dataDir, 'secrets-key', () => randomBytes(32).toString('base64'));
  return { ring: createKeyRing(parseKey(secret), previous), generated };
}

async function fromDataDir(
  dataDir: string,
  name: string,
  make: () => string = () => randomBytes(48).toString('base64url'),
): Promise<{ secret: string; generated: { file: string; created: boolean } }> {
  const file = path.resolve(dataDir, name);
  if (existsSync(file)) return { secret: await readSecret(file), generated: { file, created: false } };
  await mkdir(path.dirname(file), { recursive: true });
  try {
    // Whole or not at all: a process starting beside this one never reads it half written.
    await writePrivate(file, `${make()}\n`, 'wx');
  } catch (err) {
    // Another process won the race to create it; the file is the truth either way.
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new Error(`cannot write ${file}`, { cause: err });
  }
  return { secret: await readSecret(file), generated: { file, created: true } };
}

async function readSecret(file: string): Promise<string> {
  return (await readFile(file, 'utf8')).trim();
}
