import type { Permissions } from '@nats-io/jwt';
import { EventStream } from '../../../subjects/events.js';
import { JobStream } from '../../../subjects/jobs.js';
import { WorkerPresence } from '../../../subjects/system.js';
import { EdgeServices, EdgeStreams, integrationSubjects, type IntegrationLimits } from './accounts.js';

/**
 * What each user may publish and subscribe to: the least its holder needs (style.md, "Doors"). A
 * user that publishes or subscribes outside these gets a permission error from the server, and the
 * platform's processes log it (nats.ts). Permissions narrow what a user sends; the accounts
 * (accounts.ts) bound where the server's answers go, which permissions cannot.
 *
 * - `edge` (in the edges' account): sends requests to the workers (`svc.>`) and hears their replies
 *   on its inbox; follows the events behind the portal's live screen (`events.>`); reads and
 *   writes the keys of its failed-sign-in bucket and hears the other edges' writes. It cannot
 *   serve `svc.>`, publish events or jobs, or reach any JetStream API but its bucket's keys: no
 *   stream or consumer of its own, no purge, no delete.
 * - `workers` (in the platform's account): serve `svc.>` and answer each request once (response
 *   permission), and ask the other workers' presence for an edge; run the streams, their job consumers and the outbox relay (`$JS.API.>`,
 *   `events.>`, `jobs.>`, the acks of `JOBS`). They may create and delete the integrations'
 *   consumers, but not read from them: no pull from and no ack on `EVENTS`, whichever consumer.
 * - `service`: `npm start`'s one process, edge and workers together, in the platform's account.
 * - `admin`: everything in the platform's account, for an operator's own tools (the nats CLI,
 *   `npm run chaos`); never for a service process or an integrator.
 * - an integration (`integrationPermissions`, in its own account): pull from and acknowledge its
 *   one consumer and read its info, receive on its inboxes; nothing else.
 */
export const Roles = ['edge', 'workers', 'service', 'admin'] as const;
export type Role = (typeof Roles)[number];

/** The account a role's user lives in. */
export function roleAccount(role: Role): 'platform' | 'edge' {
  return role === 'edge' ? 'edge' : 'platform';
}

const Inbox = '_INBOX.>';

const edge = {
  pub: [EdgeServices.requests, EdgeServices.bucketGet, EdgeServices.bucketPut],
  // Its bucket's writes, as the bucket republishes them (an edge watches no consumer).
  sub: [Inbox, EdgeStreams.events, EdgeStreams.failures],
};
const workers = {
  // And the other workers' presence, to take a census or probe them for an edge (subjects/system.ts).
  pub: ['$JS.API.>', 'events.>', 'jobs.>', `$JS.ACK.${JobStream.name}.>`, WorkerPresence.census, WorkerPresence.probe('*')],
  sub: ['svc.>', Inbox],
  // Reading an integration's events is the integration's alone.
  denyPub: [`$JS.API.CONSUMER.MSG.NEXT.${EventStream.name}.>`, `$JS.ACK.${EventStream.name}.>`],
};
/** One reply per request, within a minute (the longest a request waits is REQUEST_TIMEOUT_MS). */
const OneReply = { max: 1, ttl: 60_000_000_000 };

export function rolePermissions(role: Role): Permissions {
  switch (role) {
    case 'edge':
      return { pub: { allow: edge.pub, deny: [] }, sub: { allow: edge.sub, deny: [] } };
    case 'workers':
      return { pub: { allow: workers.pub, deny: workers.denyPub }, sub: { allow: workers.sub, deny: [] }, resp: OneReply };
    case 'service':
      return {
        pub: { allow: unique([...edge.pub, ...workers.pub]), deny: workers.denyPub },
        sub: { allow: unique([...edge.sub, ...workers.sub]), deny: [] },
        resp: OneReply,
      };
    case 'admin':
      return { pub: { allow: ['>'], deny: [] }, sub: { allow: ['>'], deny: [] } };
  }
}

export interface IntegrationGrant {
  /** The durable consumer on EVENTS made for it. */
  consumer: string;
  /** The prefix of its inbox subjects (the client's inboxPrefix), kept from before integrations had accounts; `_INBOX` works as well. */
  inboxPrefix: string;
}

export function integrationPermissions(grant: IntegrationGrant, limits: Pick<IntegrationLimits, 'subscriptions' | 'payload' | 'data'>): Permissions & { subs: number; payload: number; data: number } {
  const subjects = integrationSubjects(grant.consumer);
  return {
    pub: { allow: [subjects.info, subjects.next, subjects.ack], deny: [] },
    sub: { allow: [Inbox, `${grant.inboxPrefix}.>`], deny: [] },
    subs: limits.subscriptions,
    payload: limits.payload,
    data: limits.data,
  };
}

function unique(list: string[]): string[] {
  return [...new Set(list)];
}
