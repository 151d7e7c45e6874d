import { createHash } from 'node:crypto';
import { encodeAccount, encodeOperator, encodeUser, fmtCreds, type Account, type Permissions, type User } from '@nats-io/jwt';
import { createAccount, createOperator, createUser, fromSeed, type KeyPair } from '@nats-io/nkeys';
import { edgeAccountClaims, OpenLimits, platformAccountClaims } from './accounts.js';

/**
 * The platform's NATS trust, in NATS's decentralized authentication (docs/operations.md, "The
 * message plane"): an operator that the servers trust, its system account (the servers' own
 * traffic; the workers push account updates through it), the platform's account (the workers),
 * the edges' account, and an account per integration (accounts.ts says what crosses between them).
 * Users are JWTs signed with the platform account's signing key; account JWTs, signed with the
 * operator's signing key, carry the revocations. The servers' `full` resolver takes a newer account
 * JWT at run time, so accounts and users are added and revoked without restarting a server.
 *
 * The identity keys (operator, platform account) sign only the JWTs made here at generation; what
 * runs needs only the signing keys, and those are kept sealed (authority-file.ts). The edges' and
 * the integrations' accounts are named by their public key only: their JWTs are signed by the
 * operator's signing key and their users by the platform account's, so their own seeds are never
 * needed and never kept.
 */
export const OperatorName = 'checkout-platform';
export const SystemAccountName = 'SYS';
export const AccountName = 'checkout-platform';
export const EdgeAccountName = 'checkout-platform-edge';

export interface Authority {
  operator: { publicKey: string; jwt: string; seed: string; signingSeed: string };
  system: { publicKey: string; jwt: string; seed: string; signingSeed: string; user: { jwt: string; seed: string } };
  /** `jwt`: the platform account's JWT as generated (what a new server preloads; the workers issue later ones). */
  account: { publicKey: string; jwt: string; seed: string; signingSeed: string; signingKey: string };
  /** The edges' account: its public key and its JWT as generated (what a new server preloads). */
  edgeAccount: { publicKey: string; jwt: string };
  /** Role users moved out of the platform's account (the edge's): their former keys, which the workers revoke there. */
  retiredKeys?: RetiredKey[];
}

export interface RetiredKey {
  role: string;
  userKey: string;
}

/**
 * What issues and revokes users and accounts at run time (the workers' NATS_ISSUER, issuer.json):
 * the operator's and the account's signing keys and the system account's user, never an identity
 * key. An authority holds all of it and the identity keys besides.
 */
export interface Issuer {
  operator: { publicKey: string; jwt: string; signingSeed: string };
  system: { publicKey: string; jwt: string; user: { jwt: string; seed: string } };
  account: { publicKey: string; jwt: string; signingSeed: string; signingKey: string };
  /** Absent in an issuer.json made before the edges had an account of their own. */
  edgeAccount?: { publicKey: string; jwt: string };
  retiredKeys?: RetiredKey[];
}

const text = new TextDecoder();
const seedOf = (kp: KeyPair) => text.decode(kp.getSeed());
export const keyPair = (seed: string): KeyPair => fromSeed(new TextEncoder().encode(seed));
const now = () => Math.floor(Date.now() / 1000);

export async function createAuthority(): Promise<Authority> {
  const operator = createOperator();
  const operatorSigning = createOperator();
  const system = createAccount();
  // Under strict signing key usage an account's identity key signs no users either: a signing key does.
  const systemSigning = createAccount();
  const systemUser = createUser();
  const account = createAccount();
  const accountSigning = createAccount();
  const operatorJwt = await encodeOperator(OperatorName, operator, {
    signing_keys: [operatorSigning.getPublicKey()],
    system_account: system.getPublicKey(),
    // Accounts must be signed by a signing key, never the operator's identity key, which stays with whoever generated them.
    strict_signing_key_usage: true,
  } as never);
  const systemJwt = await encodeAccount(SystemAccountName, system, { limits: OpenLimits, signing_keys: [systemSigning.getPublicKey()] }, { signer: operatorSigning });
  const systemUserJwt = await encodeUser(
    'checkout-platform-system',
    systemUser,
    system.getPublicKey(),
    { pub: { allow: ['$SYS.REQ.CLAIMS.UPDATE', '$SYS.REQ.ACCOUNT.*.CLAIMS.UPDATE'] }, sub: { allow: ['_INBOX.>'] } },
    { signer: systemSigning },
  );
  const operatorPart = { publicKey: operator.getPublicKey(), jwt: operatorJwt, seed: seedOf(operator), signingSeed: seedOf(operatorSigning) };
  const accountPart = { publicKey: account.getPublicKey(), seed: seedOf(account), signingSeed: seedOf(accountSigning), signingKey: accountSigning.getPublicKey() };
  const edge = { publicKey: newAccountKey() };
  return {
    operator: operatorPart,
    system: { publicKey: system.getPublicKey(), jwt: systemJwt, seed: seedOf(system), signingSeed: seedOf(systemSigning), user: { jwt: systemUserJwt, seed: seedOf(systemUser) } },
    account: { ...accountPart, jwt: platformAccountJwt({ operator: operatorPart, account: accountPart }, {}, now()) },
    edgeAccount: { ...edge, jwt: edgeAccountJwt({ operator: operatorPart, account: accountPart }, edge, {}, now()) },
  };
}

/** A new account's public key; its seed is dropped (the account's JWT and users are signed by signing keys). */
export function newAccountKey(): string {
  return createAccount().getPublicKey();
}

/** Users are revoked by their public key, or all at once by `*`: everything issued up to `at` (seconds) stops working. */
export type Revocations = Record<string, number>;

/**
 * A NATS v2 JWT (header, claims, ed25519 signature of both) signed with `signerSeed`. @nats-io/jwt
 * always stamps the time of encoding; here the caller gives `iat`, since a server takes an account
 * JWT only when it was issued no earlier than the one it holds (updates must be issued in order),
 * and a user that must outlive an `*` revocation must be issued after it.
 */
export function encodeNatsJwt(signerSeed: string, claims: { name: string; sub: string; iat: number; nats: object }): string {
  const signer = keyPair(signerSeed);
  const body: Record<string, unknown> = { aud: 'NATS', iat: claims.iat, iss: signer.getPublicKey(), name: claims.name, sub: claims.sub, nats: claims.nats };
  body.jti = createHash('sha256').update(JSON.stringify(body)).digest('base64url');
  const header = Buffer.from(JSON.stringify({ typ: 'JWT', alg: 'ed25519-nkey' })).toString('base64url');
  const payload = Buffer.from(JSON.stringify(body)).toString('base64url');
  const signature = Buffer.from(signer.sign(new TextEncoder().encode(`${header}.${payload}`))).toString('base64url');
  return `${header}.${payload}.${signature}`;
}

/** An account JWT, signed by the operator's signing key. */
export function encodeAccountJwt(operator: Pick<Issuer['operator'], 'signingSeed'>, account: { name: string; publicKey: string; claims: Partial<Account> }, issuedAt: number): string {
  return encodeNatsJwt(operator.signingSeed, { name: account.name, sub: account.publicKey, iat: issuedAt, nats: account.claims });
}

/** The platform account's JWT with these revocations. */
export function platformAccountJwt(authority: Pick<Issuer, 'operator'> & { account: Pick<Issuer['account'], 'publicKey' | 'signingKey'> }, revocations: Revocations, issuedAt: number): string {
  return encodeAccountJwt(authority.operator, { name: AccountName, publicKey: authority.account.publicKey, claims: platformAccountClaims(authority.account.signingKey, revocations) }, issuedAt);
}

/** The edges' account's JWT with these revocations. */
export function edgeAccountJwt(
  authority: Pick<Issuer, 'operator'> & { account: Pick<Issuer['account'], 'publicKey' | 'signingKey'> },
  edge: { publicKey: string },
  revocations: Revocations,
  issuedAt: number,
): string {
  return encodeAccountJwt(authority.operator, { name: EdgeAccountName, publicKey: edge.publicKey, claims: edgeAccountClaims(authority.account.publicKey, authority.account.signingKey, revocations) }, issuedAt);
}

export interface IssuedUser {
  publicKey: string;
  jwt: string;
  /** The standard .creds file: the user JWT and its nkey seed. */
  creds: string;
}

/**
 * A user with these permissions (and limits), signed by the platform account's signing key, in the
 * account `issuerAccount` (the platform's when unset; that account must list the signing key).
 */
export function issueUser(
  authority: { account: Pick<Issuer['account'], 'publicKey' | 'signingSeed'> },
  name: string,
  permissions: Permissions & Partial<Pick<User, 'subs' | 'payload' | 'data'>>,
  options: { seed?: string; issuerAccount?: string; issuedAt?: number } = {},
): IssuedUser {
  const user = options.seed ? keyPair(options.seed) : createUser();
  const nats = { data: -1, payload: -1, subs: -1, ...permissions, issuer_account: options.issuerAccount ?? authority.account.publicKey, type: 'user', version: 2 };
  const jwt = encodeNatsJwt(authority.account.signingSeed, { name, sub: user.getPublicKey(), iat: options.issuedAt ?? now(), nats });
  return { publicKey: user.getPublicKey(), jwt, creds: text.decode(fmtCreds(jwt, user)) };
}

/** The system user's credential (the workers push account updates with it). */
export function systemCreds(authority: { system: Pick<Issuer['system'], 'user'> }): string {
  return text.decode(fmtCreds(authority.system.user.jwt, keyPair(authority.system.user.seed)));
}

/** The claims of a JWT, without checking its signature (the servers check it; this reads what was issued). */
export function readJwtClaims<T = Record<string, unknown>>(jwt: string): { iat: number; sub: string; name: string; nats: T } {
  const body = jwt.split('.')[1] ?? '';
  return JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { iat: number; sub: string; name: string; nats: T };
}
