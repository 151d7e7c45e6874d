import { AckPolicy, DeliverPolicy, JetStreamApiCodes, JetStreamApiError, jetstreamManager } from '@nats-io/jetstream';
import { nanos, type NatsConnection } from '@nats-io/transport-node';
import { encodeAccountJwt, issueUser, readJwtClaims, systemCreds, type IssuedUser, type Issuer } from '../../src/infra/nats-auth/authority.js';
import { integrationPermissions, type IntegrationGrant } from '../../src/infra/nats-auth/permissions.js';
import { pushAccountJwt, type PushTarget } from '../../src/infra/nats-auth/push.js';
import type { Sql, TransactionSql } from '../../src/infra/postgres.js';
import { EventStream } from '../../subjects/events.js';
import { revocationJob } from '../../subjects/integrations.js';
import { insertOutbox } from '../outbox/sql.js';
import { insertRoleRevocation, latestAccountJwt, lockAccountRevocations, recordAccountJwt } from './sql.js';

/**
 * The NATS side of integrations of kind `nats`: their durable consumers on EVENTS, their users
 * (issued with the platform account's signing key), and revocations, which the platform account's
 * JWT carries to every server (the revocation job pushes it).
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

export function createNatsAccess(deps: { sql: Sql; nc: NatsConnection; issuer?: NatsIssuer }) {
  const { nc, issuer } = deps;
  const account = issuer?.authority.account.publicKey;

  return {
    available: Boolean(issuer),

    grantFor(id: string): IntegrationGrant {
      return { consumer: `integration-${id}`, inboxPrefix: `_INBOX_${id}` };
    },

    /** The durable pull consumer an integration reads, as many copies as the stream has; a repeated create with the same configuration changes nothing. */
    async createConsumer(consumer: string, filterSubject: string): Promise<void> {
      const jsm = await jetstreamManager(nc);
      const stream = await jsm.streams.info(EventStream.name);
      await jsm.consumers.add(EventStream.name, {
        durable_name: consumer,
        filter_subject: filterSubject,
        ack_policy: AckPolicy.Explicit,
        // From its creation on: what the project did before is not the integration's to read.
        deliver_policy: DeliverPolicy.New,
        ack_wait: nanos(AckWaitMs),
        max_ack_pending: 1000,
        num_replicas: stream.config.num_replicas,
      });
    },

    async deleteConsumer(consumer: string): Promise<void> {
      const jsm = await jetstreamManager(nc);
      try {
        await jsm.consumers.delete(EventStream.name, consumer);
      } catch (err) {
        if (!(err instanceof JetStreamApiError && err.code === JetStreamApiCodes.ConsumerNotFound)) throw err;
      }
    },

    /** A user that may read the one consumer of the grant and receive on its inbox prefix. */
    async issue(name: string, grant: IntegrationGrant): Promise<IssuedUser> {
      if (!issuer) throw new Error('no NATS issuer');
      return issueUser(issuer.authority, name, integrationPermissions(grant));
    },

    /**
     * In the transaction that revoked credentials (nats_credentials.revoked_at): issues the
     * platform account's JWT with every revocation, later than the one recorded before, records
     * it, and queues the job that pushes it to the servers.
     */
    async recordRevocations(tx: TransactionSql, cause: { project: string; integrationID: string }): Promise<void> {
      if (!issuer || !account) return;
      const { issuedAt } = await issueAccountJwt(tx, issuer.authority);
      await insertOutbox(tx, [revocationJob({ ...cause, account, issuedAt })]);
    },

    /** Pushes the newest recorded account JWT (the revocation job); nothing when none was recorded. */
    async pushLatest(): Promise<boolean> {
      if (!issuer || !account) return false;
      const latest = await latestAccountJwt(deps.sql, account);
      if (!latest) return false;
      await pushAccountJwt({ ...issuer.target, systemCreds: systemCreds(issuer.authority) }, latest.jwt);
      return true;
    },
  };
}

export type NatsAccess = ReturnType<typeof createNatsAccess>;

/**
 * Records the keys that renewed role credentials replace as revoked and issues the account JWT that
 * carries them, in one transaction; answers the JWT for the caller to push (npm run nats-auth --
 * --renew).
 */
export async function revokeRoleKeys(sql: Sql, authority: Issuer, keys: ReadonlyArray<{ role: string; userKey: string }>): Promise<string> {
  return sql.begin(async (tx) => {
    for (const { role, userKey } of keys) await insertRoleRevocation(tx, userKey, role);
    return (await issueAccountJwt(tx, authority)).jwt;
  }) as Promise<string>;
}

/**
 * In a transaction that revoked users (an integration's credentials, a role's renewed key): issues
 * the platform account's JWT with every revocation, later than the one recorded before, and records
 * it as the newest. Whoever pushes it next (the revocation job, npm run nats-auth -- --renew) hands
 * the servers every revocation there is.
 */
export async function issueAccountJwt(tx: TransactionSql, authority: Issuer): Promise<{ jwt: string; issuedAt: number }> {
  const account = authority.account.publicKey;
  const { revocations, lastIssuedAt } = await lockAccountRevocations(tx, account);
  const generated = readJwtClaims(authority.account.jwt).iat;
  const issuedAt = Math.max(Math.floor(Date.now() / 1000), lastIssuedAt + 1, generated + 1);
  const jwt = encodeAccountJwt(authority, revocations, issuedAt);
  await recordAccountJwt(tx, account, issuedAt, jwt);
  return { jwt, issuedAt };
}
