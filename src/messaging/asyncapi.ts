import type { z } from 'zod';
import * as availabilities from '../../subjects/availabilities.js';
import * as checkout from '../../subjects/checkout.js';
import * as checkoutProcess from '../../subjects/checkout-process.js';
import * as clientsModule from '../../subjects/clients.js';
import * as closings from '../../subjects/closings.js';
import { ProjectId } from '../../subjects/common.js';
import { ErrorHeaders, ErrorReply, JsonCodec, type Endpoint } from '../../subjects/contract.js';
import * as coupons from '../../subjects/coupons.js';
import { EventDomains, EventPayloads, EventStream, type EventDomain } from '../../subjects/events.js';
import * as fiscal from '../../subjects/fiscal.js';
import * as fulfillments from '../../subjects/fulfillments.js';
import * as idempotency from '../../subjects/idempotency.js';
import * as imports from '../../subjects/imports.js';
import * as integrations from '../../subjects/integrations.js';
import { BundledJobKinds, JobBundle, JobBundleHeader, JobKinds, JobStream, type JobKind } from '../../subjects/jobs.js';
import * as orders from '../../subjects/orders.js';
import * as pos from '../../subjects/pos.js';
import * as portalAccounts from '../../subjects/portal-accounts.js';
import * as posCredentials from '../../subjects/pos-credentials.js';
import * as pricing from '../../subjects/pricing.js';
import * as products from '../../subjects/products.js';
import * as promotions from '../../subjects/promotions.js';
import * as receipts from '../../subjects/receipts.js';
import * as settings from '../../subjects/settings.js';
import * as shops from '../../subjects/shops.js';
import * as system from '../../subjects/system.js';
import { createSchemaSet, type JsonSchema } from './json-schemas.js';

/**
 * The AsyncAPI 3.0 document of the message path, derived from subjects/: every request/reply
 * endpoint, every event domain and every job kind, with the zod schemas as payloads. Pure: the edge
 * builds it once and serves it at /asyncapi.json.
 *
 * It describes a client of the platform's NATS: it sends requests and gets a reply (or an error
 * reply), and it receives events. Jobs are the platform's own durable work, listed for operators.
 */

/** The subjects modules; test/asyncapi.test.ts checks that this names every module of subjects/. */
export const SubjectModules: Record<string, Record<string, unknown>> = {
  availabilities,
  checkout,
  'checkout-process': checkoutProcess,
  clients: clientsModule,
  closings,
  coupons,
  fiscal,
  fulfillments,
  idempotency,
  imports,
  integrations,
  orders,
  pos,
  'portal-accounts': portalAccounts,
  'pos-credentials': posCredentials,
  pricing,
  products,
  promotions,
  receipts,
  settings,
  shops,
  system,
};

/** The payload field whose value (as a subject token) is the `<id>` token of a domain's event subjects; `id` unless named here. */
const EventIdField: Partial<Record<EventDomain, string>> = { closing: 'shopID' };

/**
 * Job subjects are `jobs.<kind>.<project>.<id>[.<step>]`: the payload fields the last tokens carry
 * (a kind with one kind of work has no step). (subjects/jobs.ts cannot name its kinds' payloads:
 * their modules import it.)
 */
const JobShapes: Record<JobKind, { payload: z.ZodType; id: string; step?: string }> = {
  fulfillment: { payload: fulfillments.FulfillmentJob, id: 'fulfillmentID', step: 'call' },
  closing: { payload: closings.ClosingWork, id: 'shopID', step: 'type' },
  receipt: { payload: receipts.ReceiptJob, id: 'orderID' },
  fiscal: { payload: fiscal.FiscalJob, id: 'processID', step: 'step' },
  revocation: { payload: integrations.AccountUpdateJob, id: 'account' },
  webhook: { payload: integrations.WebhookJob, id: 'integrationID' },
  'webhook-log': { payload: integrations.WebhookLogSweepJob, id: 'hour' },
};

function isEndpoint(value: unknown): value is Endpoint {
  if (!value || typeof value !== 'object') return false;
  const e = value as Partial<Endpoint>;
  return typeof e.subject === 'string' && e.subject.startsWith('svc.') && typeof e.queue === 'string' && !!e.request && !!e.reply && !!e.codec;
}

/** Every endpoint a module exports, alone or in an object of endpoints. */
function endpointsOf(module: Record<string, unknown>): Endpoint[] {
  return Object.values(module).flatMap((value) =>
    isEndpoint(value) ? [value] : value && typeof value === 'object' ? Object.values(value).filter(isEndpoint) : [],
  );
}

const ref = ($ref: string) => ({ $ref });
const natsBinding = (queue: string) => ({ nats: { queue, bindingVersion: '0.1.0' } });

export function buildAsyncApi(options: { version: string }): JsonSchema {
  const schemas = createSchemaSet();
  const channels: Record<string, JsonSchema> = {};
  const operations: Record<string, JsonSchema> = {};
  const messages: Record<string, JsonSchema> = {};

  messages.ErrorReply = {
    name: 'ErrorReply',
    title: 'Error reply',
    summary: 'The request failed: the body is the error, the headers mark it',
    contentType: 'application/json',
    headers: {
      type: 'object',
      properties: {
        [ErrorHeaders.code]: { type: 'string', description: 'The status, as HTTP would say it (400, 403, 404, 409, 500, 503, ...)' },
        [ErrorHeaders.message]: { type: 'string', description: 'The message, on one line' },
      },
      required: [ErrorHeaders.code, ErrorHeaders.message],
    },
    payload: schemas.add(ErrorReply, 'output'),
  };

  const endpoints = Object.values(SubjectModules)
    .flatMap(endpointsOf)
    .sort((a, b) => a.subject.localeCompare(b.subject));
  for (const e of endpoints) {
    const replyChannel = `${e.subject}.reply`;
    const json = e.codec === JsonCodec;
    messages[`${e.subject}.request`] = {
      name: `${e.subject}.request`,
      title: `${e.subject} request`,
      contentType: e.codec.contentType ?? 'application/json',
      ...(json ? {} : { description: `Framed as the codec says, not as JSON: ${e.codec.description ?? '(undocumented codec)'}. The payload schema is the request once decoded.` }),
      payload: schemas.add(e.request, 'input'),
    };
    messages[`${e.subject}.reply`] = {
      name: `${e.subject}.reply`,
      title: `${e.subject} reply`,
      contentType: 'application/json',
      payload: schemas.add(e.reply, 'output'),
    };
    channels[e.subject] = {
      address: e.subject,
      title: e.subject,
      description: `Requests of ${e.subject}, served by the workers of queue group \`${e.queue}\` (each request reaches one of them).`,
      messages: { request: ref(`#/components/messages/${e.subject}.request`) },
    };
    channels[replyChannel] = {
      address: null,
      title: `${e.subject} replies`,
      description: "The request's reply subject (an inbox of the requester): the reply, or an error reply.",
      messages: { reply: ref(`#/components/messages/${e.subject}.reply`), error: ref('#/components/messages/ErrorReply') },
    };
    operations[e.subject] = {
      action: 'send',
      title: e.subject,
      channel: ref(`#/channels/${e.subject}`),
      messages: [ref(`#/channels/${e.subject}/messages/request`)],
      reply: {
        channel: ref(`#/channels/${replyChannel}`),
        messages: [ref(`#/channels/${replyChannel}/messages/reply`), ref(`#/channels/${replyChannel}/messages/error`)],
      },
      bindings: natsBinding(e.queue),
      tags: [{ name: 'request/reply' }, { name: e.queue }],
    };
  }

  for (const domain of EventDomains) {
    const payload = EventPayloads[domain] as z.ZodType;
    const idField = EventIdField[domain] ?? 'id';
    const key = `events.${domain}`;
    messages[key] = {
      name: key,
      title: `${domain} event`,
      contentType: 'application/json',
      headers: msgIdHeaders('The outbox row id: one per event; JetStream drops a repeated publish of it within the duplicate window'),
      payload: schemas.add(payload, 'output'),
    };
    channels[key] = {
      address: `events.{project}.${domain}.{id}.{event}`,
      title: `${domain} events`,
      description: `Stored in the JetStream stream \`${EventStream.name}\`. Follow them with a durable consumer filtered on \`events.<project>.${domain}.>\`.`,
      parameters: {
        project: { description: ProjectId.description ?? 'The project id' },
        id: { description: `The payload's \`${idField}\`${describeField(payload, idField)}, as a subject token: \`.\`, \`*\`, \`>\`, \`%\` and white space percent-encoded` },
        event: { description: "The payload's `event`", enum: valuesOf(payload, 'event') },
      },
      messages: { event: ref(`#/components/messages/${key}`) },
    };
    operations[key] = {
      action: 'receive',
      title: `Follow ${domain} events`,
      channel: ref(`#/channels/${key}`),
      messages: [ref(`#/channels/${key}/messages/event`)],
      tags: [{ name: 'events' }],
    };
  }

  for (const kind of JobKinds) {
    const shape = JobShapes[kind];
    const key = `jobs.${kind}`;
    messages[key] = {
      name: key,
      title: `${kind} job`,
      contentType: 'application/json',
      headers: msgIdHeaders('The job id: JetStream drops a repeated publish of it within the duplicate window'),
      payload: schemas.add(shape.payload, 'output'),
    };
    channels[key] = {
      address: shape.step ? `jobs.${kind}.{project}.{id}.{step}` : `jobs.${kind}.{project}.{id}`,
      title: `${kind} jobs (internal)`,
      description: `Internal: durable work of the platform in the JetStream stream \`${JobStream.name}\` (work-queue retention), taken by the ${kind} pool's durable consumer. Not for integrators.`,
      parameters: {
        project: { description: ProjectId.description ?? 'The project id' },
        id: { description: `The payload's \`${shape.id}\`${describeField(shape.payload, shape.id)}, as a subject token` },
        ...(shape.step ? { step: { description: `The payload's \`${shape.step}\``, enum: valuesOf(shape.payload, shape.step) } } : {}),
      },
      messages: { job: ref(`#/components/messages/${key}`) },
    };
    operations[key] = {
      action: 'receive',
      title: `Do ${kind} jobs (internal)`,
      channel: ref(`#/channels/${key}`),
      messages: [ref(`#/channels/${key}/messages/job`)],
      tags: [{ name: 'jobs' }, { name: 'internal' }],
    };
  }

  messages['jobs.bundle'] = {
    name: 'jobs.bundle',
    title: 'Job bundle',
    contentType: 'application/json',
    headers: {
      type: 'object',
      properties: {
        'Nats-Msg-Id': { type: 'string', description: "The bundle's id, made of its first and last jobs' ids and their number" },
        [JobBundleHeader]: { type: 'string', description: 'The number of jobs in the bundle' },
      },
      required: [JobBundleHeader],
    },
    payload: schemas.add(JobBundle, 'output'),
  };
  channels['jobs.bundle'] = {
    address: 'jobs.{kind}._bundle',
    title: 'Job bundles (internal)',
    description: `Internal: the jobs of one kind that one outbox batch carried, published as one message (each costs the stream a publish, an ack, a delivery and an ack). The kind's pool takes each job of it as if it had come alone.`,
    parameters: { kind: { description: 'The kind of the jobs in it', enum: [...BundledJobKinds] } },
    messages: { bundle: ref('#/components/messages/jobs.bundle') },
  };
  operations['jobs.bundle'] = {
    action: 'receive',
    title: 'Do bundled jobs (internal)',
    channel: ref('#/channels/jobs.bundle'),
    messages: [ref('#/channels/jobs.bundle/messages/bundle')],
    tags: [{ name: 'jobs' }, { name: 'internal' }],
  };

  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Checkout platform message contract',
      version: options.version,
      description: [
        'The NATS subjects of the checkout platform, generated from `subjects/`. The HTTP API is at `/openapi.json`.',
        'Requests go to `svc.<domain>.<verb>` with a reply subject; one worker of the domain\'s queue group answers with the reply, or with an error reply: the error object as the body and the headers `' +
          `${ErrorHeaders.code}\` and \`${ErrorHeaders.message}\`.`,
        `Events are \`events.<project>.<domain>.<id>.<event>\` in the JetStream stream \`${EventStream.name}\`, each stored once (\`Nats-Msg-Id\`); follow them through an integration (\`POST /{project}/integrations\`: a durable consumer with a NATS credential that reads only it, or a webhook; see docs/integrators.md).`,
        `Jobs (\`jobs.<kind>.<project>.<id>[.<step>]\`, stream \`${JobStream.name}\`; those of a kind that one outbox batch carried together as one \`jobs.<kind>._bundle\`) are internal.`,
      ].join('\n\n'),
    },
    defaultContentType: 'application/json',
    servers: {
      nats: {
        host: 'localhost:4222',
        protocol: 'nats',
        title: 'NATS with JetStream',
        description: 'A placeholder: the NATS_URL the platform is configured with (`npm start` without NATS_URL spawns a nats-server on a free loopback port and logs it).',
      },
    },
    channels,
    operations,
    components: { schemas: schemas.components('#/components/schemas/'), messages },
  };
}

function msgIdHeaders(description: string): JsonSchema {
  return { type: 'object', properties: { 'Nats-Msg-Id': { type: 'string', description } } };
}

/** The zod schemas an object or union of objects is made of. */
function objectsOf(schema: z.ZodType): z.ZodObject[] {
  const def = schema._zod.def as { type: string; options?: z.ZodType[]; shape?: unknown; innerType?: z.ZodType; in?: z.ZodType };
  if (def.type === 'object') return [schema as z.ZodObject];
  if (def.type === 'union') return (def.options ?? []).flatMap(objectsOf);
  if (def.type === 'pipe' && def.in) return objectsOf(def.in);
  return def.innerType ? objectsOf(def.innerType) : [];
}

/** The values a field takes across the objects of a payload (an enum, or a literal per union member). */
function valuesOf(schema: z.ZodType, field: string): string[] {
  const values = objectsOf(schema).flatMap((object) => {
    const property = object.shape[field] as z.ZodType | undefined;
    const def = property?._zod.def as { type?: string; entries?: Record<string, string>; values?: unknown[] } | undefined;
    if (def?.type === 'enum') return Object.values(def.entries ?? {});
    if (def?.type === 'literal') return (def.values ?? []).map(String);
    return [];
  });
  return [...new Set(values)];
}

function describeField(schema: z.ZodType, field: string): string {
  const description = objectsOf(schema)
    .map((object) => (object.shape[field] as z.ZodType | undefined)?.description)
    .find(Boolean);
  return description ? ` (${description.replace(/\.$/, '')})` : '';
}
