import type { Permissions } from '@nats-io/jwt';
import { EventStream } from '../../../subjects/events.js';
import { JobStream } from '../../../subjects/jobs.js';
import { FailureCountsBucket } from '../../edge/failure-counts.js';

/**
 * What each user of the platform's account may publish and subscribe to: the least its holder
 * needs (style.md, "Doors"). A user that publishes or subscribes outside these gets a permission
 * error from the server, and the platform's processes log it (nats.ts).
 *
 * - `edge`: sends requests to the workers (`svc.>`) and hears their replies on its inbox; follows
 *   the events behind the portal's live screen (`events.>`); keeps the shared failed-sign-in counts
 *   in its key-value bucket. It cannot serve `svc.>` (a request to it would reach whoever listens),
 *   publish events or jobs, or touch any stream but its bucket.
 * - `workers`: serve `svc.>` and answer each request once (response permission); run the streams,
 *   their job consumers and the outbox relay (`$JS.API.>`, `events.>`, `jobs.>`, the acks of
 *   `JOBS`). They may create and delete the integrations' consumers, but not read from them: no
 *   pull from and no ack on `EVENTS`, whichever consumer.
 * - `service`: `npm start`'s one process, edge and workers together.
 * - `admin`: everything in the platform's account, for an operator's own tools (the nats CLI,
 *   `npm run chaos`); never for a service process or an integrator.
 * - an integration (`integrationPermissions`): pull from and acknowledge its one consumer and
 *   receive on its own inbox prefix; nothing else.
 */
export const Roles = ['edge', 'workers', 'service', 'admin'] as const;
export type Role = (typeof Roles)[number];

const Inbox = '_INBOX.>';
const bucketApi = (bucket: string) => [`$JS.API.*.*.KV_${bucket}`, `$JS.API.*.*.KV_${bucket}.>`, `$KV.${bucket}.>`, `$JS.FC.KV_${bucket}.>`, `$JS.ACK.KV_${bucket}.>`];

const edge = {
  pub: ['svc.>', '$JS.API.INFO', ...bucketApi(FailureCountsBucket)],
  sub: [Inbox, 'events.>'],
};
const workers = {
  pub: ['$JS.API.>', 'events.>', 'jobs.>', `$JS.ACK.${JobStream.name}.>`],
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
  /** The prefix of its inbox subjects (the client's inboxPrefix). */
  inboxPrefix: string;
}

export function integrationPermissions(grant: IntegrationGrant): Permissions {
  const stream = EventStream.name;
  return {
    pub: {
      allow: [`$JS.API.CONSUMER.INFO.${stream}.${grant.consumer}`, `$JS.API.CONSUMER.MSG.NEXT.${stream}.${grant.consumer}`, `$JS.ACK.${stream}.${grant.consumer}.>`],
      deny: [],
    },
    sub: { allow: [`${grant.inboxPrefix}.>`], deny: [] },
  };
}

function unique(list: string[]): string[] {
  return [...new Set(list)];
}
