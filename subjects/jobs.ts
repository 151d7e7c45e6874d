import { z } from 'zod';

/**
 * Durable work on JetStream: a state change writes a job to the outbox in its own transaction, the
 * relay publishes it to the stream JOBS (work-queue retention: a job is gone once a worker acked
 * it), and a pool of one kind consumes its subjects through one durable consumer
 * (src/messaging/jobs.ts). Subjects: `jobs.<kind>.<project>.<...>`.
 *
 * Each kind's job payloads are zod schemas in its own subjects module (fulfillments, closings, receipts, fiscal, integrations).
 */
export const JobStream = { name: 'JOBS', subjects: ['jobs.>'] } as const;

/** The kinds of durable work, each consumed by its own pool with its own durable consumer. */
export const JobKinds = ['fulfillment', 'closing', 'receipt', 'fiscal', 'revocation', 'webhook', 'webhook-log'] as const;
export type JobKind = (typeof JobKinds)[number];

export function jobSubject(kind: JobKind, project: string, ...tokens: string[]): string {
  return ['jobs', kind, project, ...tokens].join('.');
}

/** The filter that takes every job of a kind. */
export function jobFilter(kind: JobKind): string {
  return `jobs.${kind}.>`;
}

/**
 * Jobs of a kind that one outbox batch carries travel together, as one message: a bundle, on
 * `jobs.<kind>._bundle` (no project id begins with `_`), marked by the header JobBundleHeader (the
 * number of jobs in it). A job costs JetStream its publish, its ack, its delivery and the
 * consumer's ack whatever its size (five messages, and about half a millisecond of nats-server's
 * CPU on two cores): a sale's fiscal start and finish, its fulfillment calls and receipt go out
 * with those of the sales written beside them. The pool's consumer hands each job of a bundle to
 * its handler as if it had come alone (src/messaging/jobs.ts); the bundle is acked when each of
 * its jobs is done, and comes back (each job again, so every handler must find what it recorded
 * before and do nothing) when one of them is to be tried again. Kinds whose jobs a sale writes are
 * bundled; the others (a closing, a revocation, webhook deliveries, which are bundles of their own
 * kind already) travel alone.
 */
export const BundledJobKinds: readonly JobKind[] = ['fiscal', 'fulfillment', 'receipt'];

/** The header that marks a bundle, with the number of jobs in it. */
export const JobBundleHeader = 'Jobs-Bundle';

export function jobBundleSubject(kind: JobKind): string {
  return `jobs.${kind}._bundle`;
}

/** A bundle's payload: its jobs in the order they were written, each with its own subject, Nats-Msg-Id and payload. */
export const JobBundle = z
  .object({
    jobs: z
      .array(
        z.object({
          subject: z.string().describe("The job's own subject, `jobs.<kind>.<project>.<id>[.<step>]`"),
          msgId: z.string().describe("The job's id (what its Nats-Msg-Id would be alone)"),
          payload: z.unknown().describe("The job's payload, as the kind's job message documents it"),
        }),
      )
      .min(1),
  })
  .meta({ id: 'JobBundle' });
export type JobBundle = z.infer<typeof JobBundle>;
