import { z } from 'zod';
import { endpoint } from './contract.js';

/** What a worker knows of the health of the parts behind it. */
export const WorkerHealth = z.object({
  postgres: z.enum(['ok', 'unavailable']),
  migrations: z.enum(['ok', 'pending']),
  pendingMigrations: z.array(z.string()),
});
export type WorkerHealth = z.infer<typeof WorkerHealth>;

export const system = {
  health: endpoint('svc.system.health', z.object({}), WorkerHealth, { repeatable: true }),
};
