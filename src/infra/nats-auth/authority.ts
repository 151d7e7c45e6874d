import { createHash } from 'node:crypto';
import { encodeAccount, encodeOperator, encodeUser, fmtCreds, type Account, type Permissions } from '@nats-io/jwt';
import { createAccount, createOperator, createUser, fromSeed, type KeyPair } from '@nats-io/nkeys';

/**
 * The platform's NATS trust, in NATS's decentralized authentication (docs/operations.md, "The
 * message plane"): an operator that the servers trust, its system account (the servers' own
 * traffic; the workers push account updates through it), and the platform's account, in which
 * every platform process and every integration connects as a user of its own. Users are JWTs
 * signed with the account's signing key; the account JWT, signed with the operator's signing key,
 * carries the revocations. The servers' `full` resolver takes a newer account JWT at run time, so
 * users are added and revoked without restarting a server.
 *
 * The identity keys (operator, accounts) sign only the JWTs made here at generation; what runs
 * needs only the signing keys, and those are kept sealed (authority-file.ts).
 */
export const OperatorName = 'checkout-platform';
export const SystemAccountName = 'SYS';
export const AccountName = 'checkout-platform';

export interface Authority {
  operator: { publicKey: string; jwt: string; seed: string; signingSeed: string };
  system: { publicKey: string; jwt: string; seed: string; signingSeed: string; user: { jwt: string; seed: string } };
  account: { publicKey: string; seed: string; signingSeed: string; signingKey: string };
}

/**
 * What issues and revokes users at run time (the workers' NATS_ISSUER, issuer.json): the operator's
 * and the account's signing keys and the system account's user, never an identity key. An
 * authority holds all of it and the identity keys besides.
 */
export interface Issuer {
  operator: { publicKey: string; jwt: string; signingSeed: string };
  system: { publicKey: string; jwt: string; user: { jwt: string; seed: string } };
  account: { publicKey: string; jwt: string; signingSeed: string; signingKey: string };
}

const text = new TextDecoder();
const seedOf = (kp: KeyPair) => text.decode(kp.getSeed());
export const keyPair = (seed: string): KeyPair => fromSeed(new TextEncoder().encode(seed));

/** Every limit open: a missing limit in a JWT reads as 0 (no connections, no streams). JetStream on. */
const OpenLimits = {
  subs: -1,
  data: -1,
  payload: -1,
  imports: -1,
  exports: -1,
  wildcards: true,
  conn: -1,
  leaf: -1,
};
const JetStreamOn = { mem_storage: -1, disk_storage: -1, streams: -1, consumer: -1, max_ack_pending: -1, mem_max_stream_bytes: -1, disk_max_stream_bytes: -1, max_bytes_required: false };

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
  return {
    operator: { publicKey: operator.getPublicKey(), jwt: operatorJwt, seed: seedOf(operator), signingSeed: seedOf(operatorSigning) },
    system: { publicKey: system.getPublicKey(), jwt: systemJwt, seed: seedOf(system), signingSeed: seedOf(systemSigning), user: { jwt: systemUserJwt, seed: seedOf(systemUser) } },
    account: { publicKey: account.getPublicKey(), seed: seedOf(account), signingSeed: seedOf(accountSigning), signingKey: accountSigning.getPublicKey() },
  };
}

/** Users are revoked by their public key: everything that key was issued up to `at` (seconds) stops working. */
export type Revocations = Record<string, number>;

/** What an account JWT of the platform's account says; signed by the operator's signing key. */
export function accountClaims(authority: { account: Pick<Issuer['account'], 'signingKey'> }, revocations: Revocations): Partial<Account> {
  return {
    limits: { ...OpenLimits, ...JetStreamOn },
    signing_keys: [authority.account.signingKey],
    ...(Object.keys(revocations).length ? { revocations } : {}),
    type: 'account',
    version: 2,
  };
}

/**
 * The platform's account JWT, issued at `issuedAt` (seconds). A server takes an account JWT only
 * when it was issued no earlier than the one it holds, so updates must be issued in order: the
 * caller gives each one a later time than the one before (issuer.ts), which @nats-io/jwt (it
 * always writes now) cannot do; the encoding is NATS's v2 JWT (header, claims, ed25519 signature
 * of both).
 */
export function encodeAccountJwt(
  authority: { operator: Pick<Issuer['operator'], 'signingSeed'>; account: Pick<Issuer['account'], 'publicKey' | 'signingKey'> },
  revocations: Revocations,
  issuedAt: number,
): string {
  const signer = keyPair(authority.operator.signingSeed);
  const claims: Record<string, unknown> = {
    aud: 'NATS',
    iat: issuedAt,
    iss: signer.getPublicKey(),
    name: AccountName,
    sub: authority.account.publicKey,
    nats: accountClaims(authority, revocations),
  };
  claims.jti = createHash('sha256').update(JSON.stringify(claims)).digest('base64url');
  const header = Buffer.from(JSON.stringify({ typ: 'JWT', alg: 'ed25519-nkey' })).toString('base64url');
  const body = Buffer.from(JSON.stringify(claims)).toString('base64url');
  const signature = Buffer.from(signer.sign(new TextEncoder().encode(`${header}.${body}`))).toString('base64url');
  return `${header}.${body}.${signature}`;
}

export interface IssuedUser {
  publicKey: string;
  jwt: string;
  /** The standard .creds file: the user JWT and its nkey seed. */
  creds: string;
}

/** A user of the platform's account with these permissions, signed by the account's signing key. */
export async function issueUser(authority: { account: Pick<Issuer['account'], 'publicKey' | 'signingSeed'> }, name: string, permissions: Permissions, seed?: string): Promise<IssuedUser> {
  const user = seed ? keyPair(seed) : createUser();
  const jwt = await encodeUser(name, user, authority.account.publicKey, { ...permissions }, { signer: keyPair(authority.account.signingSeed) });
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
