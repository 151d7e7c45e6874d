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
export const JobKinds = ['fulfillment', 'closing', 'receipt', 'fiscal', 'revocation', 'webhook'] as const;
export type JobKind = (typeof JobKinds)[number];

export function jobSubject(kind: JobKind, project: string, ...tokens: string[]): string {
  return ['jobs', kind, project, ...tokens].join('.');
}

/** The filter that takes every job of a kind. */
export function jobFilter(kind: JobKind): string {
  return `jobs.${kind}.>`;
}
