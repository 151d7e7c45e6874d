import { randomBytes } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import { AppError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import type { Sql, TransactionSql } from '../../src/infra/postgres.js';
import { route, type Route } from '../../src/messaging/worker.js';
import { EventStream } from '../../subjects/events.js';
import { AccountUpdateJob, AccountUpdateJobFilter, integrationPath, integrations, type CreatedIntegration, type Integration, type IntegrationInput } from '../../subjects/integrations.js';
import { readJob, startJobConsumer, type JobConsumer, type JobConsumerDeps } from '../../src/messaging/jobs.js';
import { createNatsAccess, type NatsIssuer } from './nats-access.js';
import { resendJobs } from '../outbox/resend.js';
import { destinationProblem, type DestinationPolicy } from '../../src/infra/destinations.js';
import type { KeyRing } from '../../src/secrets/key-ring.js';
import type { Config } from '../../src/config.js';
import { webhookSecretPurpose } from '../webhooks/secrets.js';
import { newWebhookSecret } from '../webhooks/signature.js';
import * as db from './sql.js';

/**
 * Integrations (subjects/integrations.ts): made, listed, changed, rotated and deleted by the
 * project's owner. A credential or secret is answered once, when it is made; the platform keeps the
 * NATS user's public key only, and a webhook's secret sealed.
 */
export interface IntegrationsDeps {
  sql: Sql;
  nc: NatsConnection;
  log: Logger;
  /** NATS_ISSUER opened; unset: integrations of kind `nats` cannot be made here. */
  natsIssuer?: NatsIssuer;
  /** Seals the webhooks' signing secrets (SECRETS_KEY). */
  secrets: KeyRing;
  /** Where webhooks may point (WEBHOOK_ALLOW_PRIVATE_NETWORKS). */
  destinations: DestinationPolicy;
  /** A change wrote to the outbox (an account update's job): publish it soon. */
  eventsWritten: () => void;
  /** How many integrations a project has, how often one rotates, and what an integration's NATS account may use (config.ts). */
  limits: Config['integrations'];
  metrics?: JobConsumerDeps['metrics'];
}

/** How long a rotated webhook secret still signs beside the new one. */
const PreviousSecretSignsMs = 24 * 3_600_000;
/** The window the rotations of an integration are counted in. */
const RotationWindowMs = 3_600_000;

export interface IntegrationsActor {
  routes: Route[];
  /** The pool that pushes account JWTs to the NATS servers (the account update jobs, kind `revocation`). */
  startAccountUpdates(): Promise<JobConsumer>;
  /** At start: issues the platform's and the edges' account JWTs again when this version makes them otherwise (see nats-access.ts). */
  ensurePlatformAccounts(): Promise<boolean>;
}

/** Account JWTs are pushed again soon, then every minute, for as long as JOBS keeps a job. */
const AccountUpdateRetriesMs = [500, 1000, 2000, 5000, 15_000, 60_000];

export function createIntegrationsActor(deps: IntegrationsDeps): IntegrationsActor {
  const { sql, log, limits } = deps;
  const nats = createNatsAccess({ sql, nc: deps.nc, issuer: deps.natsIssuer, limits: limits.nats });

  const startAccountUpdates = () =>
    startJobConsumer(
      { nc: deps.nc, log, metrics: deps.metrics },
      {
        durable: 'revocations',
        filter: AccountUpdateJobFilter,
        retryScheduleMs: AccountUpdateRetriesMs,
        maxAttempts: 1000,
        concurrency: 1,
        // JOBS lost: every account's newest JWT of the last two weeks is pushed again (a push that
        // failed right after its change, a rotation's revocation among them, would otherwise wait
        // for the account's next change).
        resend: async (life: string) => {
          const sent = await resendJobs(sql, 'revocation', life, db.undoneAccountUpdates);
          if (sent !== undefined) log.warn({ jobs: sent }, 'account JWTs were queued for the NATS servers again from Postgres (JOBS was lost)');
          deps.eventsWritten();
        },
      },
      async (job) => {
        const update = readJob(AccountUpdateJob, job, log, 'account update job');
        if (!update) return { kind: 'done' };
        try {
          await nats.pushLatest(update.account);
          return { kind: 'done' };
        } catch (err) {
          log.warn({ err, account: update.account, attempt: job.attempt }, 'the NATS servers did not take an account JWT yet; trying again');
          return { kind: 'retry', reason: err instanceof Error ? err.message : String(err) };
        }
      },
    );

  /**
   * After a change that issued an integration's account JWT committed: the servers are given it at
   * once, so that a credential answered now connects now. The job queued with it pushes it again
   * if this fails.
   */
  const pushNow = async (account: string) => {
    await nats.pushLatest(account).catch((err: unknown) => log.warn({ err, account }, 'the NATS servers did not take an integration\'s account yet: its job tries again'));
  };

  /** Counted under the project's lock: two creates side by side cannot both pass the limit. */
  const checkRoom = async (tx: TransactionSql, project: string, kind: 'nats' | 'webhook') => {
    const max = kind === 'nats' ? limits.natsPerProject : limits.webhooksPerProject;
    await tx`select pg_advisory_xact_lock(hashtext(${`integrations:${project}`}))`;
    if ((await db.countIntegrations(tx, project, kind)) >= max) {
      throw AppError.badRequest(`a project has at most ${max} integrations of kind ${kind}: delete one first`, [
        { code: 'too_many', path: 'kind', message: `at most ${max} ${kind} integrations per project` },
      ]);
    }
  };

  const find = async (project: string, id: string) => {
    const row = await db.findIntegration(sql, project, id);
    if (!row) throw AppError.notFound(`no integration ${id}`);
    return row;
  };

  const createNats = async (project: string, input: Extract<IntegrationInput, { kind: 'nats' }>): Promise<CreatedIntegration> => {
    if (!nats.available) {
      throw AppError.badRequest('integrations of kind nats need the platform\'s NATS to run with credentials (NATS_ISSUER)', [
        { code: 'unavailable', path: 'kind', message: 'this deployment issues no NATS credentials' },
      ]);
    }
    const id = newIntegrationId();
    const grant = nats.grantFor(id);
    const { created, account } = await sql.begin(async (tx) => {
      await checkRoom(tx, project, 'nats');
      const row = await db.insertIntegration(tx, { project, id, name: input.name, kind: 'nats', filter: input.filter, consumer: grant.consumer, inbox_prefix: grant.inboxPrefix });
      const opened = await nats.openAccount(tx, { project, id, ...grant });
      await db.setNatsAccount(tx, project, id, opened.account, opened.userIssuedAt);
      await db.insertNatsCredential(tx, { userKey: opened.user.publicKey, project, integrationId: id, account: opened.account });
      // Last, so that a failure before leaves no consumer behind; one after (the commit) leaves it to the consumer's removal below.
      await nats.createConsumer(grant.consumer, filterSubject(project, input.filter));
      return { created: { ...view({ ...row, nats_account: opened.account }), creds: opened.user.creds }, account: opened.account };
    }).catch(async (err: unknown) => {
      await nats.deleteConsumer(grant.consumer).catch((cause: unknown) => log.warn({ err: cause, consumer: grant.consumer }, 'the consumer of an integration not made was left'));
      throw err;
    });
    deps.eventsWritten();
    await pushNow(account);
    log.info({ project, integration: id, kind: 'nats', filter: input.filter }, 'integration made');
    return created;
  };

  /** Refuses a rotation past the limit of its window (429 with the time to wait), else counts it. */
  const checkRotations = async (tx: TransactionSql, project: string, id: string) => {
    const { allowed, retryAfterMs } = await db.countRotation(tx, project, id, RotationWindowMs, limits.rotationsPerHour);
    if (!allowed) {
      const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
      throw new AppError(429, 'too_many_rotations', `an integration is rotated at most ${limits.rotationsPerHour} times an hour: try again in ${seconds} s`, [
        { code: 'rate_limited', retryAfterSeconds: seconds },
      ]);
    }
  };

  const routes = [
    route(integrations.create, async ({ project, integration }) => {
      if (integration.kind === 'nats') return createNats(project, integration);
      return createWebhook(project, integration);
    }),

    route(integrations.list, async ({ project }) => ({ integrations: (await db.listIntegrations(sql, project)).map(view) })),

    route(integrations.get, async ({ project, id }) => view(await find(project, id))),

    route(integrations.update, async ({ project, id, patch }) => {
      const row = await find(project, id);
      if (row.kind === 'nats') {
        // Its filter is fixed (make a new one), and it is ended by deleting it.
        const fixed = [
          ...(patch.url !== undefined ? [{ code: 'not_allowed', path: 'url', message: 'only a webhook has a url' }] : []),
          ...(patch.events !== undefined ? [{ code: 'not_allowed', path: 'events', message: 'only a webhook has event types' }] : []),
          ...(patch.state !== undefined ? [{ code: 'not_allowed', path: 'state', message: 'only a webhook is disabled or enabled: delete a nats integration to end its access' }] : []),
        ];
        if (fixed.length) throw AppError.badRequest('a nats integration changes only its name', fixed);
      }
      if (patch.url !== undefined) await checkUrl(patch.url);
      const enabled = patch.state === 'active' && row.state === 'disabled';
      const changed = await db.updateIntegration(sql, project, id, {
        name: patch.name,
        url: patch.url,
        events: patch.events,
        state: patch.state,
        // Enabled again: a clean slate (its receiver's failures are forgotten); disabled by hand: says so.
        ...(patch.state === 'disabled' && row.state === 'active' ? { disabled_reason: 'disabled by the owner' } : {}),
        ...(enabled ? { disabled_reason: null, failed_attempts: 0, failing_since: null, retry_at: null } : {}),
      });
      if (!changed) throw AppError.notFound(`no integration ${id}`);
      if (patch.state !== undefined && patch.state !== row.state) log.info({ project, integration: id, state: patch.state }, 'webhook state changed');
      return view(changed);
    }),

    route(integrations.rotate, async ({ project, id }) => {
      let pushed: string | undefined;
      const rotated = await sql.begin(async (tx) => {
        const row = await db.findIntegration(tx, project, id, true);
        if (!row) throw AppError.notFound(`no integration ${id}`);
        await checkRotations(tx, project, id);
        if (row.kind === 'webhook') {
          // The secret before keeps signing beside the new one for a day: receivers move to the new one meanwhile.
          const secret = newWebhookSecret();
          await db.rotateWebhookSecret(tx, project, id, deps.secrets.seal(secret, webhookSecretPurpose(project, id)), PreviousSecretSignsMs);
          return { ...view(row), secret };
        }
        if (!nats.available) throw AppError.unavailable('this deployment issues no NATS credentials (NATS_ISSUER)');
        const grant = { project, id, consumer: row.consumer!, inboxPrefix: row.inbox_prefix! };
        await db.revokeNatsCredentials(tx, project, id);
        // One made before integrations had accounts gets its account now (its former user, in the platform's account, is revoked there).
        const next = row.nats_account
          ? { account: row.nats_account, ...(await nats.rotate(tx, { ...grant, account: row.nats_account, userIssuedAt: Number(row.user_issued_at ?? 0) })) }
          : await nats.openAccount(tx, grant);
        await db.setNatsAccount(tx, project, id, next.account, next.userIssuedAt);
        await db.insertNatsCredential(tx, { userKey: next.user.publicKey, project, integrationId: id, account: next.account });
        pushed = next.account;
        return { ...view({ ...row, nats_account: next.account }), creds: next.user.creds };
      });
      deps.eventsWritten();
      if (pushed) await pushNow(pushed);
      log.info({ project, integration: id }, 'integration credential rotated');
      return rotated;
    }),

    route(integrations.delete, async ({ project, id }) => {
      const closed = await sql.begin(async (tx) => {
        const row = await db.findIntegration(tx, project, id, true);
        if (!row) throw AppError.notFound(`no integration ${id}`);
        await db.deleteIntegration(tx, project, id);
        if (row.kind === 'webhook') await db.deleteWebhookHistory(tx, project, id);
        if (row.kind !== 'nats') return undefined;
        await db.revokeNatsCredentials(tx, project, id);
        if (row.nats_account && nats.available) {
          await nats.close(tx, { project, id, consumer: row.consumer!, account: row.nats_account, userIssuedAt: Number(row.user_issued_at ?? 0) });
        }
        await nats.deleteConsumer(row.consumer!);
        return row.nats_account ?? undefined;
      });
      deps.eventsWritten();
      if (closed) await pushNow(closed);
      log.info({ project, integration: id }, 'integration deleted');
      return null;
    }),
  ];
  return { routes, startAccountUpdates, ensurePlatformAccounts: () => nats.ensurePlatformAccounts() };

  async function checkUrl(url: string, path = 'url'): Promise<void> {
    const problem = await destinationProblem(new URL(url), deps.destinations);
    if (problem) throw AppError.badRequest(`invalid ${path}: ${problem}`, [{ code: 'invalid_url', path, message: problem }]);
  }

  async function createWebhook(project: string, input: Extract<IntegrationInput, { kind: 'webhook' }>): Promise<CreatedIntegration> {
    await checkUrl(input.url);
    const id = newIntegrationId();
    const secret = newWebhookSecret();
    const created = await sql.begin(async (tx) => {
      await checkRoom(tx, project, 'webhook');
      const row = await db.insertIntegration(tx, {
        project, id, name: input.name, kind: 'webhook', url: input.url, events: input.events ?? null, secret: deps.secrets.seal(secret, webhookSecretPurpose(project, id)),
      });
      return { ...view(row), secret };
    });
    log.info({ project, integration: id, kind: 'webhook', events: input.events ?? 'all' }, 'integration made');
    return created;
  }

}

/** 100 random bits as 20 lowercase base32 letters: a token of subjects and consumer names. */
function newIntegrationId(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  let id = '';
  for (const byte of randomBytes(20)) id += alphabet[byte & 31];
  return id;
}

function filterSubject(project: string, filter: string): string {
  return `events.${project}.${filter}`;
}

function view(row: db.IntegrationRow): Integration {
  const base = {
    id: row.id,
    name: row.name,
    kind: row.kind,
    state: row.state,
    ...(row.disabled_reason ? { disabledReason: row.disabled_reason } : {}),
    createdAt: row.created_at.toISOString(),
    links: { self: { href: integrationPath(row.project, row.id) } },
  };
  if (row.kind === 'nats') {
    const filter = row.filter ?? '>';
    return {
      ...base,
      filter,
      nats: {
        stream: EventStream.name,
        consumer: row.consumer ?? '',
        inboxPrefix: row.inbox_prefix ?? '',
        filterSubject: filterSubject(row.project, filter),
        ...(row.nats_account ? { account: row.nats_account } : {}),
        reissueRequired: !row.nats_account,
      },
    };
  }
  return { ...base, url: row.url ?? '', events: row.events };
}
