import type { Account, Export, Import } from '@nats-io/jwt';
import { EventStream } from '../../../subjects/events.js';
import { FailureCountsBucket, FailureCountsWrites } from '../../edge/failure-counts.js';

/**
 * The platform's NATS accounts and what crosses between them (docs/operations.md, "The message
 * plane"; docs/integrators.md).
 *
 * - The platform's account: the workers (and `npm start`'s one process, and the admin): the
 *   streams, the job consumers, the relay, `svc.>`.
 * - The edge's account: the edges. It imports from the platform's account what an edge uses: the
 *   workers' services (`svc.>`), the events behind the portal's live screen, and the keys of its
 *   throttling bucket (read and write, nothing else of JetStream).
 * - An account per integration of kind `nats`: it imports the pull, the consumer info and the
 *   acknowledgements of its one consumer, nothing else.
 *
 * Why accounts and not only permissions: NATS checks a user's publish permission on the subject,
 * never on the reply subject, and the server itself answers a request to wherever its reply subject
 * points. A user inside the platform's account that may publish one JetStream request could give
 * `$JS.API.STREAM.DELETE.JOBS` as the reply, and JetStream's answer would delete JOBS. Across an
 * account boundary a service import rewrites the reply subject (`_R_...`) and maps the answer back
 * into the importing account, where that subject reaches nothing of the platform's.
 *
 * Every account under the platform's operator is made by the platform (the operator's signing key
 * signs them), so the exports can be public: an account imports exactly what its JWT names.
 */

/**
 * A service the platform's account exports and nobody serves. An importing account maps it to
 * `$JS.API.INFO`: nats-server gives every account without JetStream an import of `$JS.API.>` from
 * the system account (to answer "JetStream not enabled"), unless an import covers `$JS.API.INFO`.
 * That import would answer the integrations' consumer info requests too (and first), so this one
 * takes its place: the account's own JetStream API then reaches nobody at all.
 */
export const NoJetStream = 'checkout-platform.no-jetstream';

const Stream = EventStream.name;
const Bucket = FailureCountsBucket;

/** What an edge calls in the platform's account (the edge user's permissions allow the same subjects). */
export const EdgeServices = {
  requests: 'svc.>',
  bucketGet: `$JS.API.DIRECT.GET.KV_${Bucket}.>`,
  bucketPut: `$KV.${Bucket}.>`,
} as const;
/** What an edge follows from the platform's account: the events behind the portal's live screen, and the writes its bucket stored. */
export const EdgeStreams = { events: 'events.>', failures: `${FailureCountsWrites}.>` } as const;

/** The subjects of one integration's consumer, as the platform exports them and its account imports them. */
export function integrationSubjects(consumer: string) {
  return {
    next: `$JS.API.CONSUMER.MSG.NEXT.${Stream}.${consumer}`,
    info: `$JS.API.CONSUMER.INFO.${Stream}.${consumer}`,
    ack: `$JS.ACK.${Stream}.${consumer}.>`,
  };
}

/**
 * How long the server keeps the way back for answers to a pull (a stream of messages, then the
 * request's end): longer than any pull may wait (the integrations' consumers cap a pull's expiry at
 * MaxPullExpiresMs).
 */
const PullResponseThresholdMs = 5 * 60_000;
export const MaxPullExpiresMs = 2 * 60_000;

export function platformExports(): Export[] {
  const any = integrationSubjects('*');
  const service = (name: string, subject: string, extra: Partial<Export> = {}): Export => ({ name, subject, type: 'service', response_type: 'Singleton', ...extra });
  return [
    service('edge requests', EdgeServices.requests),
    service('edge bucket reads', EdgeServices.bucketGet),
    service('edge bucket writes', EdgeServices.bucketPut),
    { name: 'edge events', subject: EdgeStreams.events, type: 'stream' },
    { name: 'edge bucket writes stored', subject: EdgeStreams.failures, type: 'stream' },
    service('integration pulls', any.next, { response_type: 'Stream', response_threshold: PullResponseThresholdMs * 1_000_000 }),
    service('integration consumer info', any.info),
    service('integration acks', `$JS.ACK.${Stream}.>`),
    service('no jetstream', NoJetStream),
  ];
}

function serviceImport(platform: string, name: string, subject: string, localSubject?: string): Import {
  return { name, subject, account: platform, type: 'service', ...(localSubject ? { local_subject: localSubject } : {}) };
}

const shadowJetStream = (platform: string) => serviceImport(platform, 'no jetstream', NoJetStream, '$JS.API.INFO');

export function edgeImports(platform: string): Import[] {
  return [
    serviceImport(platform, 'requests', EdgeServices.requests),
    serviceImport(platform, 'bucket reads', EdgeServices.bucketGet),
    serviceImport(platform, 'bucket writes', EdgeServices.bucketPut),
    { name: 'events', subject: EdgeStreams.events, account: platform, type: 'stream' },
    { name: 'bucket writes stored', subject: EdgeStreams.failures, account: platform, type: 'stream' },
    shadowJetStream(platform),
  ];
}

export function integrationImports(platform: string, consumer: string): Import[] {
  const subjects = integrationSubjects(consumer);
  return [
    serviceImport(platform, 'pull', subjects.next),
    serviceImport(platform, 'consumer info', subjects.info),
    serviceImport(platform, 'acks', subjects.ack),
    shadowJetStream(platform),
  ];
}

/** Every limit open: a missing limit in a JWT reads as 0 (no connections, no streams). */
export const OpenLimits = { subs: -1, data: -1, payload: -1, imports: -1, exports: -1, wildcards: true, conn: -1, leaf: -1 };
const JetStreamOn = { mem_storage: -1, disk_storage: -1, streams: -1, consumer: -1, max_ack_pending: -1, mem_max_stream_bytes: -1, disk_max_stream_bytes: -1, max_bytes_required: false };

/** The platform's account: everything open, JetStream on, its exports, and its revocations. */
export function platformAccountClaims(signingKey: string, revocations: Record<string, number>): Partial<Account> {
  return {
    limits: { ...OpenLimits, ...JetStreamOn },
    signing_keys: [signingKey],
    exports: platformExports(),
    ...(Object.keys(revocations).length ? { revocations } : {}),
    type: 'account',
    version: 2,
  };
}

/**
 * The edges' account: no JetStream of its own, no exports, no leaf nodes; its users are signed by
 * the platform account's signing key (the workers' issuer), listed here.
 */
export function edgeAccountClaims(platform: string, signingKey: string, revocations: Record<string, number> = {}): Partial<Account> {
  return {
    limits: { ...OpenLimits, exports: 0, wildcards: false, leaf: 0, imports: edgeImports(platform).length },
    imports: edgeImports(platform),
    signing_keys: [signingKey],
    ...(Object.keys(revocations).length ? { revocations } : {}),
    type: 'account',
    version: 2,
  };
}

/** What an integration's account and user may use (INTEGRATION_NATS_* in src/config.ts). */
export interface IntegrationLimits {
  /** Connections at once, all of the account's users together. */
  connections: number;
  /** Subscriptions per connection. */
  subscriptions: number;
  /** The largest message a connection may publish (pulls, acks and info requests are small). */
  payload: number;
  /**
   * Bytes a connection may publish (carried in the JWTs; nats-server 2.9 does not enforce it: what
   * an integration receives is bounded by its consumer's max_ack_pending and pull limits instead).
   */
  data: number;
}

/**
 * An integration's account: its four imports, the limits, no JetStream, no exports. `revokedBefore`
 * (seconds) revokes every user issued up to then (a rotation: the new user is issued later);
 * `closed` makes it refuse every connection (a deleted integration: its JWT stays on the servers).
 */
export function integrationAccountClaims(
  input: { platform: string; signingKey: string; consumer: string; limits: IntegrationLimits; revokedBefore?: number; closed?: boolean },
): Partial<Account> {
  const imports = integrationImports(input.platform, input.consumer);
  return {
    limits: {
      conn: input.closed ? 0 : input.limits.connections,
      subs: input.limits.subscriptions,
      payload: input.limits.payload,
      data: input.limits.data,
      imports: imports.length,
      exports: 0,
      wildcards: false,
      leaf: 0,
      disallow_bearer: true,
    },
    imports,
    signing_keys: [input.signingKey],
    ...(input.revokedBefore !== undefined ? { revocations: { '*': input.revokedBefore } } : {}),
    type: 'account',
    version: 2,
  };
}
