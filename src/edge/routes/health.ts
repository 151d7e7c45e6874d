import { z } from 'zod';
import type { ZodApp } from '../schemas.js';
import { ChildStates } from '../../infra/supervise.js';
import { RetryAfterSeconds } from '../errors.js';

export const HealthReport = z.object({
  status: z.enum(['ok', 'unavailable']),
  checks: z.object({
    nats: z.enum(['ok', 'unavailable']),
    postgres: z.enum(['ok', 'unavailable', 'unknown']),
    migrations: z.enum(['ok', 'pending', 'unknown']),
  }),
  /**
   * Only while a server the embedded defaults started (spawned nats-server, embedded Postgres) is
   * down: whether it is being restarted (or the restarts failed), since when, and how many failed.
   */
  embedded: z
    .partialRecord(
      z.enum(['nats', 'postgres']),
      z.object({ state: z.enum(ChildStates), downSince: z.string().optional(), failedRestarts: z.number().int() }),
    )
    .optional(),
});
export type HealthReport = z.infer<typeof HealthReport>;
export type HealthCheck = () => Promise<HealthReport>;

export function healthRoutes(app: ZodApp, check: HealthCheck): void {
  app.get(
    '/health',
    {
      schema: {
        tags: ['system'],
        summary: 'Health: 200 only when NATS and Postgres answer and every migration is applied',
        response: { 200: HealthReport, 503: HealthReport },
      },
    },
    async (_request, reply) => {
      const report = await check();
      if (report.status === 'ok') return reply.code(200).send(report);
      return reply.code(503).header('retry-after', String(RetryAfterSeconds)).send(report);
    },
  );
}
