import { AckPolicy, DeliverPolicy, JetStreamApiCodes, JetStreamApiError, jetstreamManager, type ConsumerConfig } from '@nats-io/jetstream';
import { nanos, type NatsConnection } from '@nats-io/transport-node';
import { integrationAccountClaims, MaxPullExpiresMs, type IntegrationLimits } from '../../src/infra/nats-auth/accounts.js';
import { edgeAccountJwt, encodeAccountJwt, issueUser, newAccountKey, platformAccountJwt, readJwtClaims, systemCreds, type IssuedUser, type Issuer } from '../../src/infra/nats-auth/authority.js';
import { integrationPermissions, type IntegrationGrant } from '../../src/infra/nats-auth/permissions.js';
import { pushAccountJwt, type PushTarget } from '../../src/infra/nats-auth/push.js';
import type { Sql, TransactionSql } from '../../src/infra/postgres.js';
import { watchStream, type StreamHealer } from '../../src/infra/healing.js';
import type { StreamSpec } from '../../src/infra/jetstream.js';
import type { Logger } from '../../src/logger.js';
import { EventStream } from '../../subjects/events.js';
import { accountUpdateJob } from '../../subjects/integrations.js';
import { insertOutbox } from '../outbox/sql.js';
import * as db from './sql.js';

/**
 * The NATS side of integrations of kind `nats` (src/infra/nats-auth/accounts.ts): each is an
 * account of its own, which imports the pull, the consumer info and the acks of its one durable
 * consumer on EVENTS (the consumer lives in the platform's account, beside the stream), and a user
 * in that account. The platform's and the edges' account JWTs are issued here too, since the
 * workers hold the signing keys and the revocations live in Postgres.
 *
 * An account JWT reaches the servers as a job (the one job mechanism): the change that issues it
 * records it and, in the same transaction, the job whose worker pushes the newest recorded JWT of
 * that account through the system account (again until a server took it).
 *
 * Revocations stay bounded: an integration's account revokes its users all at once (`*` up to a
 * time; the rotated user is issued after it), so its list holds one entry whatever the number of
 * rotations, and it dies with the integration. The platform's account lists the role keys an
 * operator renewed and the integration users issued in it before integrations had accounts (a
 * fixed set); the edges' account the edge keys renewed.
 *
 * `issuer` is NATS_ISSUER opened (npm start: its own); without one (a NATS without credentials)
 * integrations of kind `nats` cannot be made.
 */
export interface NatsIssuer {
  authority: Issuer;
  /** Where the servers are, for the system account's connection. */
  target: Omit<PushTarget, 'systemCreds'>;
}

/** How long a consumer waits for an ack before it delivers an event again. */
const AckWaitMs = 30_000;
/** Events delivered and not yet acknowledged, per integration. */
const MaxAckPending = 1000;
/** Pull requests waiting at once on one integration's consumer (each is held by the server). */
const MaxWaitingPulls = 16;

/** The configuration of an integration's consumer (made at creation, and again when it disappeared). */
export function integrationConsumerConfig(consumer: string, filterSubject: string, replicas: number): Partial<ConsumerConfig> {
  return {
    durable_name: consumer,
    filter_subject: filterSubject,
    ack_policy: AckPolicy.Explicit,
    // From its creation on: what the project did before is not the integration's to read.
    deliver_policy: DeliverPolicy.New,
    ack_wait: nanos(AckWaitMs),
    max_ack_pending: MaxAckPending,
    max_waiting: MaxWaitingPulls,
    max_batch: MaxAckPending,
    // Shorter than the time the servers keep the way back for a pull's answers across accounts.
    max_expires: nanos(MaxPullExpiresMs),
    num_replicas: replicas,
  };
}

/**
 * The watch of the stream EVENTS (src/infra/healing.ts): the stream, and every NATS integration's
 * consumer on it, made again when they disappear. A consumer made again delivers the events from
 * then on (DeliverPolicy.New, as at its creation): what the stream held when it was lost is not
 * the platform's to make up (docs/integrators.md). The integrations are read from Postgres at most
 * every ConsumerListMs, and an integration is read again before its consumer is made (one deleted
 * meanwhile gets none).
 */
export function watchEvents(deps: { sql: Sql; nc: NatsConnection; log: Logger; spec: StreamSpec }): StreamHealer {
  const { sql, nc, spec } = deps;
  let listed: { at: number; rows: Array<{ project: string; id: string; consumer: string; filter: string }> } | undefined;
  const consumers = async (fresh: boolean) => {
    if (fresh || !listed || Date.now() - listed.at > ConsumerListMs) listed = { at: Date.now(), rows: await db.listNatsConsumers(sql) };
    return listed.rows.map((row) => ({
      name: row.consumer,
      ensure: async () => {
        const [still] = await db.listNatsConsumers(sql, row);
        if (!still) return;
        const jsm = await jetstreamManager(nc);
        await jsm.consumers.add(EventStream.name, integrationConsumerConfig(row.consumer, `events.${row.project}.${row.filter}`, spec.replicas ?? 1));
      },
    }));
  };
  return watchStream(nc, deps.log, { spec, consumers });
}

const ConsumerListMs = 10_000;

export function createNatsAccess(deps: { sql: Sql; nc: NatsConnection; issuer?: NatsIssuer; limits: IntegrationLimits }) {
  const { nc, issuer, limits } = deps;

  const integrationAccountJwt = (
    authority: Issuer,
    row: { project: string; id: string; consumer: string; account: string },
    state: { revokedBefore?: number; closed?: boolean },
    issuedAt: number,
  ) =>
    encodeAccountJwt(
      authority.operator,
      {
        name: `integration ${row.id} of ${row.project}`,
        publicKey: row.account,
        claims: integrationAccountClaims({ platform: authority.account.publicKey, signingKey: authority.account.signingKey, consumer: row.consumer, limits, ...state }),
      },
      issuedAt,
    );

  /** Records an account JWT issued now (later than the one recorded before) and the job that pushes it. */
  const recordAndQueue = async (tx: TransactionSql, account: string, encode: (issuedAt: number) => string, cause?: { project: string; integrationID: string }) => {
    const issuedAt = await db.nextAccountIssueTime(tx, account);
    await db.recordAccountJwt(tx, account, issuedAt, encode(issuedAt));
    await insertOutbox(tx, [accountUpdateJob({ account, issuedAt, ...cause })]);
  };

  const required = (): Issuer => {
    if (!issuer) throw new Error('no NATS issuer');
    return issuer.authority;
  };

  /** A user of the integration's account that may read its one consumer and receive on its inboxes. */
  const issue = (row: { project: string; id: string; consumer: string; inboxPrefix: string }, account: string, issuedAt: number): IssuedUser =>
    issueUser(required(), `integration ${row.id} of ${row.project}`, integrationPermissions(row, limits), { issuerAccount: account, issuedAt });

  return {
    available: Boolean(issuer),

    grantFor(id: string): IntegrationGrant {
      return { consumer: `integration-${id}`, inboxPrefix: `_INBOX_${id}` };
    },

    /** The durable pull consumer an integration reads, as many copies as the stream has; a repeated create with the same configuration changes nothing. */
    async createConsumer(consumer: string, filterSubject: string): Promise<void> {
      const jsm = await jetstreamManager(nc);
      const stream = await jsm.streams.info(EventStream.name);
      await jsm.consumers.add(EventStream.name, integrationConsumerConfig(consumer, filterSubject, stream.config.num_replicas));
    },

    async deleteConsumer(consumer: string): Promise<void> {
      const jsm = await jetstreamManager(nc);
      try {
        await jsm.consumers.delete(EventStream.name, consumer);
      } catch (err) {
        if (!(err instanceof JetStreamApiError && err.code === JetStreamApiCodes.ConsumerNotFound)) throw err;
      }
    },

    /**
     * In the transaction that made the integration (or rotates one made before integrations had
     * accounts): a new account for it, recorded with its JWT and the job that pushes it, and its
     * first user. Answers the account's key and the user.
     */
    async openAccount(tx: TransactionSql, row: { project: string; id: string; consumer: string; inboxPrefix: string }): Promise<{ account: string; user: IssuedUser; userIssuedAt: number }> {
      const authority = required();
      const account = newAccountKey();
      await recordAndQueue(tx, account, (at) => integrationAccountJwt(authority, { ...row, account }, {}, at), { project: row.project, integrationID: row.id });
      const userIssuedAt = Math.floor(Date.now() / 1000);
      return { account, user: issue(row, account, userIssuedAt), userIssuedAt };
    },

    /**
     * A rotation: every user of the account issued up to now is revoked (`*`), and a new one is
     * issued a second later (a server compares whole seconds). Answers the new user and the times.
     */
    async rotate(tx: TransactionSql, row: { project: string; id: string; consumer: string; inboxPrefix: string; account: string; userIssuedAt: number }) {
      const authority = required();
      const revokedBefore = Math.max(Math.floor(Date.now() / 1000), row.userIssuedAt);
      await recordAndQueue(tx, row.account, (at) => integrationAccountJwt(authority, row, { revokedBefore }, at), { project: row.project, integrationID: row.id });
      const userIssuedAt = revokedBefore + 1;
      return { user: issue(row, row.account, userIssuedAt), revokedBefore, userIssuedAt };
    },

    /** A deleted integration: its account refuses every connection and revokes every user (its JWT stays on the servers). */
    async close(tx: TransactionSql, row: { project: string; id: string; consumer: string; account: string; userIssuedAt: number }): Promise<void> {
      const authority = required();
      const revokedBefore = Math.max(Math.floor(Date.now() / 1000), row.userIssuedAt);
      await recordAndQueue(tx, row.account, (at) => integrationAccountJwt(authority, row, { revokedBefore, closed: true }, at), { project: row.project, integrationID: row.id });
    },

    /** Pushes the newest recorded JWT of an account (the account update job); false when none was recorded. */
    async pushLatest(account: string): Promise<boolean> {
      if (!issuer) return false;
      const latest = await db.latestAccountJwt(deps.sql, account);
      if (!latest) return false;
      await pushAccountJwt({ ...issuer.target, systemCreds: systemCreds(issuer.authority) }, latest.jwt);
      return true;
    },

    /**
     * At start: the platform's and the edges' account JWTs as this version makes them (exports,
     * imports, revocations, the former keys of role users moved to another account). One that differs from the one recorded is issued again, recorded and
     * queued for the servers; answers whether any was.
     */
    async ensurePlatformAccounts(): Promise<boolean> {
      if (!issuer) return false;
      const authority = issuer.authority;
      return (await deps.sql.begin(async (tx) => {
        // Role users moved out of the platform's account (npm run nats-auth wrote their former keys into issuer.json).
        for (const { role, userKey } of authority.retiredKeys ?? []) await db.insertRoleRevocation(tx, userKey, role, null);
        const platform = await issuePlatformAccountJwt(tx, authority, true);
        const edge = authority.edgeAccount ? await issueEdgeAccountJwt(tx, authority, authority.edgeAccount, true) : false;
        return platform || edge;
      })) as boolean;
    },
  };
}

export type NatsAccess = ReturnType<typeof createNatsAccess>;

/** The claims of a JWT that decide what it grants (not when or by whom it was signed). */
function grantOf(jwt: string): unknown {
  return readJwtClaims(jwt).nats;
}

/**
 * The platform account's JWT with every revocation of its users, issued later than the one
 * recorded before and recorded with the job that pushes it. With `onlyIfChanged`, nothing is issued
 * when the recorded one grants the same (a start); answers whether one was issued.
 */
async function issuePlatformAccountJwt(tx: TransactionSql, authority: Issuer, onlyIfChanged = false): Promise<boolean> {
  const account = authority.account.publicKey;
  await db.lockAccounts(tx);
  const revocations = await db.platformRevocations(tx);
  const probe = platformAccountJwt(authority, revocations, 0);
  const recorded = await db.latestAccountJwt(tx, account);
  if (onlyIfChanged && recorded && isSameGrant(recorded.jwt, probe)) return false;
  const issuedAt = Math.max(await db.nextAccountIssueTime(tx, account), readJwtClaims(authority.account.jwt).iat + 1);
  await db.recordAccountJwt(tx, account, issuedAt, platformAccountJwt(authority, revocations, issuedAt));
  await insertOutbox(tx, [accountUpdateJob({ account, issuedAt })]);
  return true;
}

/** The edges' account's JWT with the renewed edge keys revoked; as issuePlatformAccountJwt. */
async function issueEdgeAccountJwt(tx: TransactionSql, authority: Issuer, edge: { publicKey: string; jwt: string }, onlyIfChanged = false): Promise<boolean> {
  await db.lockAccounts(tx);
  const revocations = await db.roleRevocations(tx, edge.publicKey);
  const recorded = await db.latestAccountJwt(tx, edge.publicKey);
  const probe = edgeAccountJwt(authority, edge, revocations, 0);
  // The JWT generated with the account is what the servers preload: nothing to push while it is the same.
  if (onlyIfChanged && isSameGrant(recorded?.jwt ?? edge.jwt, probe)) return false;
  const issuedAt = Math.max(await db.nextAccountIssueTime(tx, edge.publicKey), readJwtClaims(edge.jwt).iat + 1);
  await db.recordAccountJwt(tx, edge.publicKey, issuedAt, edgeAccountJwt(authority, edge, revocations, issuedAt));
  await insertOutbox(tx, [accountUpdateJob({ account: edge.publicKey, issuedAt })]);
  return true;
}

function isSameGrant(a: string, b: string): boolean {
  return JSON.stringify(grantOf(a)) === JSON.stringify(grantOf(b));
}

/**
 * Records the keys that renewed or moved role credentials replace as revoked in the account each
 * lived in, and issues the account JWTs that carry them, in one transaction; answers the JWTs for
 * the caller to push (npm run nats-auth -- --renew, and a start that moved the edge's user).
 */
export async function revokeRoleKeys(sql: Sql, authority: Issuer, keys: ReadonlyArray<{ role: string; userKey: string; account: string }>): Promise<string[]> {
  return (await sql.begin(async (tx) => {
    for (const { role, userKey, account } of keys) await db.insertRoleRevocation(tx, userKey, role, account === authority.account.publicKey ? null : account);
    const accounts = new Set(keys.map((k) => k.account));
    if (accounts.has(authority.account.publicKey)) await issuePlatformAccountJwt(tx, authority);
    if (authority.edgeAccount && accounts.has(authority.edgeAccount.publicKey)) await issueEdgeAccountJwt(tx, authority, authority.edgeAccount);
    const jwts: string[] = [];
    for (const account of accounts) {
      const latest = await db.latestAccountJwt(tx, account);
      if (latest) jwts.push(latest.jwt);
    }
    return jwts;
  })) as string[];
}
