import { z } from 'zod';
import { endpoint } from './contract.js';

/** What a worker knows of the health of the parts behind it. */
export const WorkerHealth = z.object({
  postgres: z.enum(['ok', 'unavailable']),
  migrations: z.enum(['ok', 'pending']),
  pendingMigrations: z.array(z.string()),
});
export type WorkerHealth = z.infer<typeof WorkerHealth>;

const WorkerId = z.string().regex(/^[A-Za-z0-9]{1,64}$/);

/**
 * Worker presence, for the edge to learn at once that a worker holding its requests died (the NATS
 * server drops a dead connection's subscriptions, and answers a request to a subject nobody
 * subscribes to with "no responders"). Every worker process answers the census with its id (no
 * queue group: all of them answer), and answers on its own probe subject while it runs.
 *
 * These subjects work inside the workers' account only: an edge in its own account reaches the
 * workers through a service import, which carries one answer per request and no "no responders".
 * So an edge asks one worker (`system.census`, `system.probe`) to take the census or probe the
 * others for it, and answer once.
 */
export const WorkerPresence = {
  census: 'svc.system.workers',
  probe: (id: string) => `svc.system.worker.${id}`,
} as const;
export const WorkerCensusReply = z.object({ id: WorkerId });

export const system = {
  health: endpoint('svc.system.health', z.object({}), WorkerHealth, { repeatable: true }),
  /** The ids of the worker processes that answered a census (one worker takes it). */
  census: endpoint('svc.system.census', z.object({}), z.object({ ids: z.array(WorkerId) }), { repeatable: true }),
  /** Which of these workers are gone (the server answered "no responders" on their subjects); one that is busy is not gone. */
  probe: endpoint('svc.system.probe', z.object({ ids: z.array(WorkerId).max(1000) }), z.object({ gone: z.array(WorkerId) }), { repeatable: true }),
};
