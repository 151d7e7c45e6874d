import { z } from 'zod';
import { Done, Href, Pagination, ProjectId, SelfLinks } from './common.js';
import { jobFilter, jobSubject } from './jobs.js';
import { endpoint } from './contract.js';
import { EventStream, EventTypes } from './events.js';
import { tryParseJson } from './formats/json.js';

/**
 * Integrations (docs/integrators.md): how an outside system follows a project's events, set up by
 * the project's owner (`projectsWrite`). Two kinds of one resource:
 *
 * - `nats`: a durable pull consumer on EVENTS, filtered to `events.<project>.<filter>`, and a NATS
 *   user credential (a standard .creds file) that may pull from and acknowledge that one consumer
 *   and receive on its own inbox prefix, nothing else. The credential is answered once (create,
 *   rotate); the platform keeps only its public key. Deleting the integration revokes it on every
 *   NATS node and removes the consumer.
 * - `webhook`: an https URL that receives each event of the types it asks for, POSTed in Standard
 *   Webhooks' form and signed with the integration's secret (`whsec_...`, answered once).
 */
export const IntegrationKinds = ['nats', 'webhook'] as const;

export const IntegrationId = z
  .string()
  .regex(/^[a-z2-7]{20}$/, 'an integration id as the platform made it')
  .describe('The integration id, made by the platform');

const Name = z.string().min(1).max(100).describe('What the integration is for (at most 100 characters)');

/**
 * Why a subject filter could reach outside its place, or undefined when it cannot: tokens are
 * separated by dots and none is empty (no `..`, no dot at either end), `*` and `>` stand only as
 * whole tokens, `>` only last, and no token holds whitespace.
 */
export function subjectFilterProblem(filter: string): string | undefined {
  const tokens = filter.split('.');
  if (tokens.some((t) => t === '')) return 'a filter has no empty token (no "..", no dot at either end)';
  if (tokens.some((t) => /\s/u.test(t))) return 'a filter token holds no whitespace';
  if (tokens.some((t) => t !== '*' && t !== '>' && /[*>]/.test(t))) return 'a wildcard stands only as a whole token ("*" or ">")';
  if (tokens.slice(0, -1).includes('>')) return '">" stands only as the last token';
  return undefined;
}

export const NatsFilter = z
  .string()
  .min(1)
  .max(200)
  .superRefine((filter, ctx) => {
    // An empty filter is min(1)'s to say.
    const problem = filter === '' ? undefined : subjectFilterProblem(filter);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  .describe('The events to read, as a subject filter below `events.<project>.` (such as `pos.>` or `order.*.final`); `>`, all of the project\'s, by default');

/** An event type `<domain>.<event>` (`order.final`), or every event of a domain (`pos.*`). */
export const EventType = z
  .string()
  .max(100)
  .refine((type) => {
    const [domain, event, ...rest] = type.split('.');
    const events = EventTypes[domain as keyof typeof EventTypes] as readonly string[] | undefined;
    return rest.length === 0 && events !== undefined && (event === '*' || events.includes(event ?? ''));
  }, `an event type <domain>.<event> (such as order.final) or <domain>.* (such as pos.*); the types are ${Object.entries(EventTypes).map(([d, events]) => `${d}.{${events.join(',')}}`).join(', ')}`);

/** An absolute http(s) URL; whether it may be called (https, a public address) the workers decide (WEBHOOK_ALLOW_PRIVATE_NETWORKS). */
export const WebhookUrl = z
  .string()
  .max(2000)
  .refine((url) => URL.canParse(url) && ['https:', 'http:'].includes(new URL(url).protocol), 'an absolute https URL')
  .describe('Where events are POSTed: https, resolving to public addresses');

const WebhookEvents = z.array(EventType).min(1).max(50).describe('The event types to receive; left out: all');

export const IntegrationInput = z
  .discriminatedUnion('kind', [
    z.object({ kind: z.literal('nats'), name: Name, filter: NatsFilter.default('>') }),
    z.object({ kind: z.literal('webhook'), name: Name, url: WebhookUrl, events: WebhookEvents.optional() }),
  ])
  .meta({ id: 'NewIntegration' });
export type IntegrationInput = z.infer<typeof IntegrationInput>;

export const IntegrationStates = ['active', 'disabled'] as const;

export const IntegrationPatch = z
  .object({
    name: Name.optional(),
    url: WebhookUrl.optional(),
    events: WebhookEvents.nullable().optional().describe('The event types to receive; null: all'),
    state: z.enum(IntegrationStates).optional().describe('`disabled` stops deliveries; `active` starts them again'),
  })
  .strict()
  .meta({ id: 'IntegrationPatch' });
export type IntegrationPatch = z.infer<typeof IntegrationPatch>;

export const Integration = z
  .object({
    id: IntegrationId,
    name: z.string(),
    kind: z.enum(IntegrationKinds),
    state: z.enum(IntegrationStates),
    disabledReason: z.string().optional().describe('Why it is disabled (deliveries that failed for days, or the owner)'),
    createdAt: z.iso.datetime(),
    filter: z.string().optional().describe('nats: the filter below `events.<project>.`'),
    nats: z
      .object({
        stream: z.literal(EventStream.name),
        consumer: z.string().describe('The durable pull consumer the credential reads'),
        inboxPrefix: z.string().describe('An inbox prefix the credential may receive on besides `_INBOX` (the client\'s inboxPrefix option; kept for clients set up with it)'),
        filterSubject: z.string().describe('The consumer\'s filter: `events.<project>.<filter>`'),
        account: z.string().optional().describe('The public key of the NATS account the credential belongs to: the integration\'s own'),
        reissueRequired: z
          .boolean()
          .describe('true for an integration made before integrations had NATS accounts of their own: its credential no longer connects, and a rotation issues one that does'),
      })
      .optional(),
    url: z.string().optional().describe('webhook: where events are POSTed'),
    events: z.array(z.string()).nullable().optional().describe('webhook: the event types it receives; null: all'),
    links: SelfLinks,
  })
  .meta({ id: 'Integration' });
export type Integration = z.infer<typeof Integration>;

export const CreatedIntegration = Integration.extend({
  creds: z.string().optional().describe('nats: the credential (a .creds file: user JWT and nkey seed). Shown only in this answer.'),
  secret: z.string().optional().describe('webhook: the signing secret (whsec_...). Shown only in this answer.'),
}).meta({ id: 'CreatedIntegration' });
export type CreatedIntegration = z.infer<typeof CreatedIntegration>;

export const IntegrationList = z.object({ integrations: z.array(Integration) }).meta({ id: 'IntegrationList' });

export function integrationPath(project: string, id: string): string {
  return `/${project}/integrations/${id}`;
}

const IntegrationRef = z.object({ project: ProjectId, id: IntegrationId });

/** One attempt to deliver an event to a webhook. */
export const WebhookDelivery = z
  .object({
    eventId: z.string().describe('The event\'s id: the webhook-id of every attempt'),
    eventType: z.string().describe('<domain>.<event>'),
    attempt: z.int().describe('1 for the first attempt of this event; a redelivery by hand counts on'),
    at: z.iso.datetime(),
    status: z.string().describe('The HTTP status of the answer (2xx: delivered), or `timeout`, or `connection_failed` (refused, reset, a destination that is not allowed)'),
    durationMs: z.int(),
    response: z.string().describe('The first 500 bytes of the answer (or of the error)'),
  })
  .meta({ id: 'WebhookDelivery' });
export type WebhookDelivery = z.infer<typeof WebhookDelivery>;

export const WebhookDeliveryList = z
  .object({
    deliveries: z.array(WebhookDelivery).describe('Newest first'),
    pagination: Pagination,
    links: z.object({ self: Href, nextPage: Href.optional() }),
  })
  .meta({ id: 'WebhookDeliveryList' });

/**
 * Where a page of the delivery log starts: the attempt before it, by the order of the list (newest
 * first: its time to the microsecond, then its event id and attempt, both descending). The list
 * pages by this key, not by an offset: a page costs the same at any depth, and attempts made while
 * someone reads neither shift nor repeat the rows of the pages after.
 */
export const DeliveryKey = z.object({
  at: z.iso.datetime({ precision: 6 }).describe('The attempt\'s time, to the microsecond (UTC)'),
  eventId: z.string().min(1).max(200),
  attempt: z.int().min(0),
});
export type DeliveryKey = z.infer<typeof DeliveryKey>;

/** A DeliveryKey as the `after` of a page's link: base64url of its JSON, opaque to clients. */
export function deliveryCursor(key: DeliveryKey): string {
  return Buffer.from(JSON.stringify([key.at, key.eventId, key.attempt])).toString('base64url');
}

/** The `after` query parameter: a cursor as deliveryCursor made it, read back into its key. */
export const DeliveryCursor = z
  .string()
  .max(400)
  .transform((text, ctx) => {
    const parsed = z
      .tuple([z.string(), z.string(), z.int()])
      .transform(([at, eventId, attempt]) => ({ at, eventId, attempt }))
      .pipe(DeliveryKey)
      .safeParse(tryParseJson(Buffer.from(text, 'base64url').toString('utf8')));
    if (parsed.success) return parsed.data;
    ctx.addIssue({ code: 'custom', message: 'a cursor as links.nextPage carries it' });
    return z.NEVER;
  })
  .describe('Where the page starts: as links.nextPage carries it (the list pages by key)');

export const WebhookEventId = z.string().min(1).max(200).regex(/^[\w:.-]+$/, 'an event id as a delivery names it');

export const integrations = {
  create: endpoint('svc.integrations.create', z.object({ project: ProjectId, integration: IntegrationInput }), CreatedIntegration),
  list: endpoint('svc.integrations.list', z.object({ project: ProjectId }), IntegrationList, { repeatable: true }),
  get: endpoint('svc.integrations.get', IntegrationRef, Integration, { repeatable: true }),
  update: endpoint('svc.integrations.update', IntegrationRef.extend({ patch: IntegrationPatch }), Integration),
  rotate: endpoint('svc.integrations.rotate', IntegrationRef, CreatedIntegration),
  delete: endpoint('svc.integrations.delete', IntegrationRef, Done),
  /**
   * A page of a webhook's delivery attempts, newest first, after `after` (the key of the last one of
   * the page before; none: the first page), how many there are, and the key after which the next
   * page starts, when there is one.
   */
  deliveries: endpoint(
    'svc.integrations.deliveries',
    IntegrationRef.extend({ after: DeliveryKey.optional(), limit: z.int().min(1).max(1000) }),
    z.object({ deliveries: z.array(WebhookDelivery), totalItems: z.int(), next: DeliveryKey.optional() }),
    { repeatable: true },
  ),
  /** Sends one event again (a new attempt, the same webhook-id), whether or not it was delivered. */
  redeliver: endpoint('svc.integrations.redeliver', IntegrationRef.extend({ eventId: WebhookEventId }), z.object({ eventId: z.string(), queued: z.literal(true) })),
};

/**
 * Account JWTs reach the NATS servers as a job (the one job mechanism; its kind keeps its first
 * name, `revocation`): a change that issues an account's JWT (an integration made, rotated or
 * deleted; a role key renewed; a start that finds the platform's accounts changed) records it and,
 * in the same transaction, this job, whose worker pushes the newest recorded JWT of the account to
 * the servers through the system account (again until a server took it).
 */
export const AccountUpdateJob = z
  .object({
    account: z.string().describe('The public key of the account whose JWT is pushed'),
    issuedAt: z.int().describe('When that JWT was issued (seconds)'),
    project: ProjectId.optional().describe('The project of the integration that caused it'),
    integrationID: IntegrationId.optional().describe('The integration that caused it (made, rotated or deleted)'),
  })
  .meta({ id: 'AccountUpdateJob' });
export type AccountUpdateJob = z.infer<typeof AccountUpdateJob>;

export const AccountUpdateJobFilter = jobFilter('revocation');

/** `jobs.revocation.<project>.<account>`; `platform` in place of a project for the platform's own accounts. */
export function accountUpdateJob(payload: AccountUpdateJob): { subject: string; payload: AccountUpdateJob; msgId: string } {
  return { subject: jobSubject('revocation', payload.project ?? 'platform', payload.account), payload, msgId: `account:${payload.account}:${payload.issuedAt}` };
}

/** An event as a webhook delivery job carries it. */
export const WebhookEvent = z.object({
  eventID: z.string().min(1).max(200).describe('The event\'s outbox id: its Nats-Msg-Id, and the webhook-id every attempt carries'),
  type: z.string().describe('The event type, <domain>.<event>'),
  subject: z.string().describe('The event\'s subject'),
  writtenAt: z.iso.datetime().describe('When the change wrote the event'),
  event: z.string().describe('The event\'s JSON text, as /asyncapi.json documents it: the webhook body\'s data, sent as written'),
});
export type WebhookEvent = z.infer<typeof WebhookEvent>;

/**
 * Webhook deliveries: the events of one outbox batch that one webhook asks for (each POSTed on its
 * own). The outbox relay publishes it beside the events (actors/outbox/relay.ts), with a
 * Nats-Msg-Id made of the webhook and the batch's events, so that a relay that publishes a batch
 * again does not queue it twice; the webhooks pool delivers it, and records each event's attempts.
 */
export const WebhookJob = z
  .object({
    project: ProjectId,
    integrationID: IntegrationId.describe('The webhook integration'),
    events: z.array(WebhookEvent).min(1).max(100),
  })
  .meta({ id: 'WebhookJob' });
export type WebhookJob = z.infer<typeof WebhookJob>;

export const WebhookJobFilter = jobFilter('webhook');

/**
 * The delivery log's sweep: every worker process ticks each hour (node-cron) and claims the hour in
 * Postgres (a unique insert), which writes this job in the same statement; its worker deletes the
 * attempts older than WEBHOOK_LOG_DAYS, a bounded batch at a time.
 */
export const WebhookLogSweepJob = z.object({ hour: z.iso.datetime().describe('The hour claimed') }).meta({ id: 'WebhookLogSweepJob' });
export type WebhookLogSweepJob = z.infer<typeof WebhookLogSweepJob>;
export const WebhookLogSweepFilter = jobFilter('webhook-log');

/** The sweep's job for an hour: `jobs.webhook-log._all.<hour>` (no project's: `_` begins none). */
export function webhookLogSweepJob(hour: Date): { subject: string; payload: WebhookLogSweepJob; msgId: string } {
  const text = hour.toISOString().replace(/\.\d+Z$/, 'Z');
  return { subject: jobSubject('webhook-log', '_all', text), payload: { hour: text }, msgId: `webhook-log:${text}` };
}

/** The event type of an event subject `events.<project>.<domain>.<id>.<event>`: `<domain>.<event>`. */
export function eventTypeOf(subject: string): string {
  const tokens = subject.split('.');
  return `${tokens[2]}.${tokens[4]}`;
}

/** The events one webhook delivery job carries at most (a batch's events for one webhook are split into jobs of this many). */
export const WebhookEventsPerJob = 100;

/**
 * A webhook delivery job as the relay publishes it, from outbox rows' text: each event's JSON goes
 * in as a string, as written (neither the relay nor the worker parses it and writes it again).
 */
export function webhookJobText(rows: ReadonlyArray<{ id: string; subject: string; payload: string; writtenAt: string }>, integrationID: string): { subject: string; msgId: string; payload: string } {
  const project = rows[0]!.subject.split('.')[1] ?? '';
  const events = rows.map((row) => JSON.stringify({ eventID: row.id, type: eventTypeOf(row.subject), subject: row.subject, writtenAt: row.writtenAt, event: row.payload }));
  const msgId = `webhook:${integrationID}:${rows[0]!.id}:${rows.length}:${rows.at(-1)!.id}`;
  return { subject: jobSubject('webhook', project, integrationID), msgId, payload: `${JSON.stringify({ project, integrationID }).slice(0, -1)},"events":[${events.join(',')}]}` };
}
