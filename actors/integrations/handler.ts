import { randomBytes } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import { AppError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import type { Sql } from '../../src/infra/postgres.js';
import { route, type Route } from '../../src/messaging/worker.js';
import { EventStream } from '../../subjects/events.js';
import { integrationPath, integrations, RevocationJob, RevocationJobFilter, type CreatedIntegration, type Integration, type IntegrationInput } from '../../subjects/integrations.js';
import { readJob, startJobConsumer, type JobConsumer, type JobConsumerDeps } from '../../src/messaging/jobs.js';
import { createNatsAccess, type NatsIssuer } from './nats-access.js';
import { destinationProblem, type DestinationPolicy } from '../../src/infra/destinations.js';
import type { KeyRing } from '../../src/secrets/key-ring.js';
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
  /** A change wrote to the outbox (a revocation's job): publish it soon. */
  eventsWritten: () => void;
  metrics?: JobConsumerDeps['metrics'];
}

/** Webhooks a project may have (each is a receiver the platform calls for every event it asks for). */
export const MaxWebhooksPerProject = 20;
/** How long a rotated webhook secret still signs beside the new one. */
const PreviousSecretSignsMs = 24 * 3_600_000;

export interface IntegrationsActor {
  routes: Route[];
  /** The pool that pushes revocations to the NATS servers (the revocation jobs). */
  startRevocationJobs(): Promise<JobConsumer>;
}

/** Revocations are pushed again soon, then every minute, for as long as JOBS keeps a job. */
const RevocationRetriesMs = [500, 1000, 2000, 5000, 15_000, 60_000];

export function createIntegrationsActor(deps: IntegrationsDeps): IntegrationsActor {
  const { sql, log } = deps;
  const nats = createNatsAccess({ sql, nc: deps.nc, issuer: deps.natsIssuer });

  const startRevocationJobs = () =>
    startJobConsumer(
      { nc: deps.nc, log, metrics: deps.metrics },
      { durable: 'revocations', filter: RevocationJobFilter, retryScheduleMs: RevocationRetriesMs, maxAttempts: 1000, concurrency: 1 },
      async (job) => {
        if (!readJob(RevocationJob, job, log, 'revocation job')) return { kind: 'done' };
        try {
          await nats.pushLatest();
          return { kind: 'done' };
        } catch (err) {
          log.warn({ err, attempt: job.attempt }, 'the NATS servers did not take the account JWT with the revocations yet; trying again');
          return { kind: 'retry', reason: err instanceof Error ? err.message : String(err) };
        }
      },
    );

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
    const created = await sql.begin(async (tx) => {
      const row = await db.insertIntegration(tx, { project, id, name: input.name, kind: 'nats', filter: input.filter, consumer: grant.consumer, inbox_prefix: grant.inboxPrefix });
      await nats.createConsumer(grant.consumer, filterSubject(project, input.filter));
      try {
        const user = await nats.issue(`integration ${id} of ${project}`, grant);
        await db.insertNatsCredential(tx, { userKey: user.publicKey, project, integrationId: id });
        return { ...view(row), creds: user.creds };
      } catch (err) {
        await nats.deleteConsumer(grant.consumer).catch((cause: unknown) => log.warn({ err: cause, consumer: grant.consumer }, 'the consumer of an integration not made was left'));
        throw err;
      }
    });
    log.info({ project, integration: id, kind: 'nats', filter: input.filter }, 'integration made');
    return created;
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
      const rotated = await sql.begin(async (tx) => {
        const row = await db.findIntegration(tx, project, id, true);
        if (!row) throw AppError.notFound(`no integration ${id}`);
        if (row.kind === 'webhook') {
          // The secret before keeps signing beside the new one for a day: receivers move to the new one meanwhile.
          const secret = newWebhookSecret();
          await db.rotateWebhookSecret(tx, project, id, deps.secrets.seal(secret, webhookSecretPurpose(project, id)), PreviousSecretSignsMs);
          return { ...view(row), secret };
        }
        const grant = { consumer: row.consumer!, inboxPrefix: row.inbox_prefix! };
        await db.revokeNatsCredentials(tx, project, id);
        const user = await nats.issue(`integration ${id} of ${project}`, grant);
        await db.insertNatsCredential(tx, { userKey: user.publicKey, project, integrationId: id });
        await nats.recordRevocations(tx, { project, integrationID: id });
        return { ...view(row), creds: user.creds };
      });
      deps.eventsWritten();
      log.info({ project, integration: id }, 'integration credential rotated');
      return rotated;
    }),

    route(integrations.delete, async ({ project, id }) => {
      await sql.begin(async (tx) => {
        const row = await db.findIntegration(tx, project, id, true);
        if (!row) throw AppError.notFound(`no integration ${id}`);
        await db.deleteIntegration(tx, project, id);
        if (row.kind === 'webhook') await db.deleteWebhookHistory(tx, project, id);
        if (row.kind === 'nats') {
          if (await db.revokeNatsCredentials(tx, project, id)) await nats.recordRevocations(tx, { project, integrationID: id });
          await nats.deleteConsumer(row.consumer!);
        }
      });
      deps.eventsWritten();
      log.info({ project, integration: id }, 'integration deleted');
      return null;
    }),
  ];
  return { routes, startRevocationJobs };

  async function checkUrl(url: string, path = 'url'): Promise<void> {
    const problem = await destinationProblem(new URL(url), deps.destinations);
    if (problem) throw AppError.badRequest(`invalid ${path}: ${problem}`, [{ code: 'invalid_url', path, message: problem }]);
  }

  async function createWebhook(project: string, input: Extract<IntegrationInput, { kind: 'webhook' }>): Promise<CreatedIntegration> {
    await checkUrl(input.url);
    const id = newIntegrationId();
    const secret = newWebhookSecret();
    const created = await sql.begin(async (tx) => {
      // Counted under the project's lock: two creates side by side cannot both pass the limit.
      await tx`select pg_advisory_xact_lock(hashtext(${`integrations:${project}`}))`;
      if ((await db.countIntegrations(tx, project, 'webhook')) >= MaxWebhooksPerProject) {
        throw AppError.badRequest(`a project has at most ${MaxWebhooksPerProject} webhooks: delete one first`, [
          { code: 'too_many', path: 'kind', message: `at most ${MaxWebhooksPerProject} webhook integrations per project` },
        ]);
      }
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
      nats: { stream: EventStream.name, consumer: row.consumer ?? '', inboxPrefix: row.inbox_prefix ?? '', filterSubject: filterSubject(row.project, filter) },
    };
  }
  return { ...base, url: row.url ?? '', events: row.events };
}
