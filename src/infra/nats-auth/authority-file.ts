import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { sealedKeyId, type KeyRing } from '../../secrets/key-ring.js';
import { writePrivate } from '../private-file.js';
import { createAuthority, edgeAccountJwt, issueUser, keyPair, newAccountKey, readJwtClaims, type Authority, type Issuer } from './authority.js';
import { roleAccount, rolePermissions, Roles, type Role } from './permissions.js';

/**
 * The files of the platform's NATS trust, in one folder (`npm start`: DATA_DIR/nats-auth; an
 * operator's cluster: `npm run nats-auth -- --dir <folder>`), each readable by its owner only:
 *
 * - `authority.json`: the operator, system account, platform account and edges' account (public keys
 *   and JWTs) and their seeds, identity keys included, sealed with SECRETS_KEY. It stays where the
 *   trust is made.
 * - `issuer.json`: what of it the workers need to issue and revoke users at run time (NATS_ISSUER):
 *   the signing keys and the system account's user, sealed the same way, without an identity key.
 *   A worker that is broken into gives away what can be replaced (the signing keys), never the keys
 *   the servers' configuration names.
 * - `<role>.creds` for edge, workers, service (`npm start`'s one process) and admin: the users the
 *   processes connect as (NATS_CREDS).
 * - `nats-server.conf`: what a server needs to trust them (server-config.ts).
 *
 * Made once and kept: a later run reads the keys again and only brings the role credentials to the
 * permissions of this version (same keys, a new JWT). Files made before the edges had an account of
 * their own gain one (a new key), and the edge's user a new key in it: the key it held is kept in
 * `retiredKeys` (in both files), and the workers revoke it in the platform's account.
 */
export const AuthorityFileName = 'authority.json';
export const IssuerFileName = 'issuer.json';

const Sealed = z.string().startsWith('sealed:');
const EdgeAccount = z.object({ publicKey: z.string(), jwt: z.string() });
const RetiredKeys = z.array(z.object({ role: z.string(), userKey: z.string() }));
const AuthorityFile = z.object({
  version: z.literal(1),
  operator: z.object({ publicKey: z.string(), jwt: z.string(), seed: Sealed, signingSeed: Sealed }),
  system: z.object({ publicKey: z.string(), jwt: z.string(), seed: Sealed, signingSeed: Sealed, user: z.object({ jwt: z.string(), seed: Sealed }) }),
  account: z.object({ publicKey: z.string(), jwt: z.string(), seed: Sealed, signingSeed: Sealed, signingKey: z.string() }),
  // Absent in files made before the edges had an account of their own.
  edgeAccount: EdgeAccount.optional(),
  retiredKeys: RetiredKeys.optional(),
});
type AuthorityFile = z.infer<typeof AuthorityFile>;
const IssuerFile = z.object({
  version: z.literal(1),
  kind: z.literal('issuer'),
  operator: z.object({ publicKey: z.string(), jwt: z.string(), signingSeed: Sealed }),
  system: z.object({ publicKey: z.string(), jwt: z.string(), user: z.object({ jwt: z.string(), seed: Sealed }) }),
  account: z.object({ publicKey: z.string(), jwt: z.string(), signingSeed: Sealed, signingKey: z.string() }),
  edgeAccount: EdgeAccount.optional(),
  retiredKeys: RetiredKeys.optional(),
});
type IssuerFile = z.infer<typeof IssuerFile>;

/** The authority as its file holds it (the account JWTs made at generation are what a new server preloads). */
export type StoredAuthority = Authority;

const purpose = (field: string) => `nats.${field}`;

/**
 * The workers' part of the seeds (the signing keys and the system user) is sealed and opened alike
 * in both files; the authority file adds the identity seeds around it.
 */
function sealIssuer(issuer: Issuer, ring: KeyRing): IssuerFile {
  const s = (value: string, field: string) => ring.seal(value, purpose(field));
  return {
    version: 1,
    kind: 'issuer',
    operator: { publicKey: issuer.operator.publicKey, jwt: issuer.operator.jwt, signingSeed: s(issuer.operator.signingSeed, 'operatorSigning') },
    system: { publicKey: issuer.system.publicKey, jwt: issuer.system.jwt, user: { jwt: issuer.system.user.jwt, seed: s(issuer.system.user.seed, 'systemUser') } },
    account: { publicKey: issuer.account.publicKey, jwt: issuer.account.jwt, signingSeed: s(issuer.account.signingSeed, 'accountSigning'), signingKey: issuer.account.signingKey },
    ...(issuer.edgeAccount ? { edgeAccount: issuer.edgeAccount } : {}),
    ...(issuer.retiredKeys?.length ? { retiredKeys: issuer.retiredKeys } : {}),
  };
}

/** The workers' part of either file, opened: no identity seed is opened, not even of an authority file. */
function openIssuer(file: Omit<IssuerFile, 'version' | 'kind'>, ring: KeyRing): Issuer {
  const o = (value: string, field: string) => ring.open(value, purpose(field));
  const { operator, system, account, edgeAccount, retiredKeys } = file;
  return {
    operator: { publicKey: operator.publicKey, jwt: operator.jwt, signingSeed: o(operator.signingSeed, 'operatorSigning') },
    system: { publicKey: system.publicKey, jwt: system.jwt, user: { jwt: system.user.jwt, seed: o(system.user.seed, 'systemUser') } },
    account: { publicKey: account.publicKey, jwt: account.jwt, signingSeed: o(account.signingSeed, 'accountSigning'), signingKey: account.signingKey },
    ...(edgeAccount ? { edgeAccount } : {}),
    ...(retiredKeys?.length ? { retiredKeys } : {}),
  };
}

function seal(authority: StoredAuthority, ring: KeyRing): AuthorityFile {
  const { kind: _kind, ...issuer } = sealIssuer(issuerOf(authority), ring);
  const s = (value: string, field: string) => ring.seal(value, purpose(field));
  return {
    ...issuer,
    operator: { ...issuer.operator, seed: s(authority.operator.seed, 'operator') },
    system: { ...issuer.system, seed: s(authority.system.seed, 'system'), signingSeed: s(authority.system.signingSeed, 'systemSigning') },
    account: { ...issuer.account, seed: s(authority.account.seed, 'account') },
  };
}

/** An authority file opened; one made before the edges had an account has none yet (ensureNatsAuth adds it). */
type OpenedAuthority = Omit<StoredAuthority, 'edgeAccount'> & { edgeAccount?: StoredAuthority['edgeAccount'] };

function open(file: AuthorityFile, ring: KeyRing): OpenedAuthority {
  const issuer = openIssuer(file, ring);
  const o = (value: string, field: string) => ring.open(value, purpose(field));
  return {
    operator: { ...issuer.operator, seed: o(file.operator.seed, 'operator') },
    system: { ...issuer.system, seed: o(file.system.seed, 'system'), signingSeed: o(file.system.signingSeed, 'systemSigning') },
    account: { ...issuer.account, seed: o(file.account.seed, 'account') },
    ...(issuer.edgeAccount ? { edgeAccount: issuer.edgeAccount } : {}),
  };
}

/** The edges' account made for an authority that has none (a file from before it existed). */
function withEdgeAccount(authority: OpenedAuthority): StoredAuthority {
  if (authority.edgeAccount) return { ...authority, edgeAccount: authority.edgeAccount };
  const edge = { publicKey: newAccountKey() };
  return { ...authority, edgeAccount: { ...edge, jwt: edgeAccountJwt(authority, edge, {}, Math.floor(Date.now() / 1000)) } };
}

/** Reads authority.json and opens its seeds (throws UnreadableSecretError, naming the key, when the ring cannot). */
async function readAuthority(file: string, ring: KeyRing): Promise<OpenedAuthority> {
  const stored = await readNatsKeysFile(file);
  if (!stored) throw new Error(`${file} does not exist (npm run nats-auth makes it)`);
  if ('kind' in stored) throw new Error(`${file} is the workers' issuer file; npm run nats-auth needs the authority file (${AuthorityFileName}) beside it`);
  return open(stored, ring);
}

/**
 * Reads NATS_ISSUER: issuer.json, or an authority.json as workers were given before issuer.json
 * existed (`identityKeys`: it holds the identity keys too, which a worker does not need).
 */
export async function readIssuer(file: string, ring: KeyRing): Promise<{ issuer: Issuer; identityKeys: boolean }> {
  const stored = await readNatsKeysFile(file);
  if (!stored) throw new Error(`${file} does not exist (npm run nats-auth makes it)`);
  return { issuer: openIssuer(stored, ring), identityKeys: !('kind' in stored) };
}

async function readNatsKeysFile(file: string): Promise<AuthorityFile | IssuerFile | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const json = tryJson(text);
  const parsed = IssuerFile.safeParse(json);
  if (parsed.success) return parsed.data;
  const authority = AuthorityFile.safeParse(json);
  if (!authority.success) throw new Error(`${file} is not the platform's NATS authority or issuer file (npm run nats-auth makes them)`);
  return authority.data;
}

async function readAuthorityFile(file: string): Promise<AuthorityFile | undefined> {
  const stored = await readNatsKeysFile(file);
  if (stored && 'kind' in stored) throw new Error(`${file} is the workers' issuer file, not the authority file`);
  return stored;
}

function tryJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Seals an authority or issuer file's seeds anew under the ring's current key (npm run reseal). */
export async function resealAuthorityFile(file: string, ring: KeyRing): Promise<void> {
  const stored = await readNatsKeysFile(file);
  if (!stored) throw new Error(`${file} does not exist`);
  const sealed = 'kind' in stored ? sealIssuer(openIssuer(stored, ring), ring) : seal(withEdgeAccount(open(stored, ring)), ring);
  await writePrivate(file, `${JSON.stringify(sealed, null, 2)}\n`);
}

/** The ids of the keys an authority or issuer file's seeds are sealed under. */
export async function authorityKeyIds(file: string): Promise<string[]> {
  const stored = await readNatsKeysFile(file);
  if (!stored) return [];
  const sealed =
    'kind' in stored
      ? [stored.operator.signingSeed, stored.system.user.seed, stored.account.signingSeed]
      : [stored.operator.seed, stored.operator.signingSeed, stored.system.seed, stored.system.signingSeed, stored.system.user.seed, stored.account.seed, stored.account.signingSeed];
  return [...new Set(sealed.map(sealedKeyId))];
}

export interface NatsAuthFolder {
  dir: string;
  authority: StoredAuthority;
  /** authority.json */
  authorityFile: string;
  /** issuer.json: the workers' NATS_ISSUER */
  issuerFile: string;
  /** The .creds file of each role. */
  creds: Record<Role, string>;
  /** Whether this run made the keys (the first run). */
  created: boolean;
}

/** Makes the folder's files the first time, and brings them to this version's accounts and permissions after. */
export async function ensureNatsAuth(dir: string, ring: KeyRing): Promise<NatsAuthFolder> {
  const folder = path.resolve(dir);
  await mkdir(folder, { recursive: true, mode: 0o700 });
  const authorityFile = path.join(folder, AuthorityFileName);
  let authority: StoredAuthority;
  let created = false;
  const stored = await readAuthorityFile(authorityFile);
  if (stored) {
    const opened = open(stored, ring);
    authority = withEdgeAccount(opened);
    if (!opened.edgeAccount) await writePrivate(authorityFile, `${JSON.stringify(seal(authority, ring), null, 2)}\n`);
  } else {
    authority = await createAuthority();
    try {
      await writePrivate(authorityFile, `${JSON.stringify(seal(authority, ring), null, 2)}\n`, 'wx');
      created = true;
    } catch (err) {
      // Another process made it first: its keys are the ones.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      authority = withEdgeAccount(await readAuthority(authorityFile, ring));
    }
  }
  const creds = {} as Record<Role, string>;
  for (const role of Roles) {
    creds[role] = path.join(folder, `${role}.creds`);
    const moved = await ensureRoleCreds(creds[role], authority, role);
    // Its former key still opens the platform's account: the workers revoke it there (they read it in issuer.json).
    if (moved) {
      authority = { ...authority, retiredKeys: [...(authority.retiredKeys ?? []), { role, userKey: moved }] };
      await writePrivate(authorityFile, `${JSON.stringify(seal(authority, ring), null, 2)}\n`);
    }
  }
  const issuerFile = path.join(folder, IssuerFileName);
  await ensureIssuerFile(issuerFile, authority, ring);
  return { dir: folder, authority, authorityFile, issuerFile, creds, created };
}

/** issuer.json: kept when it holds this authority's signing keys and accounts; else written from the authority. */
async function ensureIssuerFile(file: string, authority: StoredAuthority, ring: KeyRing): Promise<void> {
  const existing = await readIssuer(file, ring).catch(() => undefined);
  const same = existing && !existing.identityKeys && isDeepStrictEqual(existing.issuer, issuerOf(authority));
  if (!same) await writePrivate(file, `${JSON.stringify(sealIssuer(issuerOf(authority), ring), null, 2)}\n`);
}

/** The part of an authority the workers need. */
function issuerOf(authority: StoredAuthority): Issuer {
  const { operator, system, account, edgeAccount, retiredKeys } = authority;
  return {
    operator: { publicKey: operator.publicKey, jwt: operator.jwt, signingSeed: operator.signingSeed },
    system: { publicKey: system.publicKey, jwt: system.jwt, user: system.user },
    account: { publicKey: account.publicKey, jwt: account.jwt, signingSeed: account.signingSeed, signingKey: account.signingKey },
    edgeAccount: { publicKey: edgeAccount.publicKey, jwt: edgeAccount.jwt },
    ...(retiredKeys?.length ? { retiredKeys } : {}),
  };
}

/** The public key of the account a role's user lives in. */
function accountOf(authority: StoredAuthority, role: Role): string {
  return roleAccount(role) === 'edge' ? authority.edgeAccount.publicKey : authority.account.publicKey;
}

/**
 * A role's .creds: kept when its account and permissions are this version's; else issued again,
 * with the same key in the same account, or a new key when the role moved to another account (a
 * key is revoked per account, so the former one must not be the new one): that former key is
 * answered, to be revoked.
 */
async function ensureRoleCreds(file: string, authority: StoredAuthority, role: Role): Promise<string | undefined> {
  const wanted = rolePermissions(role);
  const account = accountOf(authority, role);
  const existing = await readFile(file, 'utf8').catch(() => undefined);
  const parts = existing ? parseCreds(existing) : undefined;
  let movedFrom: string | undefined;
  if (parts) {
    const { nats } = readJwtClaims<{ pub?: unknown; sub?: unknown; resp?: unknown; issuer_account?: string }>(parts.jwt);
    const same = nats.issuer_account === account && isDeepStrictEqual({ pub: nats.pub, sub: nats.sub, resp: nats.resp }, { pub: wanted.pub, sub: wanted.sub, resp: wanted.resp });
    if (same) return undefined;
    if (nats.issuer_account !== account) movedFrom = keyPair(parts.seed).getPublicKey();
  }
  const user = issueUser(authority, `checkout-platform-${role}`, wanted, { issuerAccount: account, ...(parts && !movedFrom ? { seed: parts.seed } : {}) });
  await writePrivate(file, user.creds);
  return movedFrom;
}

/** A role's credential issued anew: the key it replaces (to be revoked), and the new .creds text. */
export interface RenewedRole {
  role: Role;
  file: string;
  /** The public key of the credential the file held, if it held one. */
  replacedKey: string | undefined;
  userKey: string;
  creds: string;
}

/**
 * A new key for a role's user, with this version's permissions (npm run nats-auth -- --renew): the
 * file is not written here, since the old key must be recorded as revoked first (a write that then
 * failed would leave the old key in force and unrecorded).
 */
export async function renewRoleCreds(folder: NatsAuthFolder, role: Role): Promise<RenewedRole> {
  const file = folder.creds[role];
  const parts = parseCreds(await readFile(file, 'utf8').catch(() => ''));
  const user = issueUser(folder.authority, `checkout-platform-${role}`, rolePermissions(role), { issuerAccount: accountOf(folder.authority, role) });
  return { role, file, replacedKey: parts ? keyPair(parts.seed).getPublicKey() : undefined, userKey: user.publicKey, creds: user.creds };
}

/** Writes a renewed role's .creds, whole or not at all. */
export async function writeRenewedCreds(renewed: RenewedRole): Promise<void> {
  await writePrivate(renewed.file, renewed.creds);
}

/** The user JWT and nkey seed of a .creds file. */
function parseCreds(creds: string): { jwt: string; seed: string } | undefined {
  // A JWT is base64url, dashes included: each value runs to the dashes of its END line.
  const jwt = /-----BEGIN NATS USER JWT-----\s*(\S+?)\s*-{3,}END NATS USER JWT/.exec(creds)?.[1];
  const seed = /-----BEGIN USER NKEY SEED-----\s*(\S+?)\s*-{3,}END USER NKEY SEED/.exec(creds)?.[1];
  return jwt && seed ? { jwt, seed } : undefined;
}

