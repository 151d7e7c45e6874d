import { z } from 'zod';
import type { ZodApp } from '../schemas.js';

export const HealthReport = z.object({
  status: z.enum(['ok', 'unavailable']),
  checks: z.object({
    nats: z.enum(['ok', 'unavailable']),
    postgres: z.enum(['ok', 'unavailable', 'unknown']),
    migrations: z.enum(['ok', 'pending', 'unknown']),
  }),
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
      return reply.code(report.status === 'ok' ? 200 : 503).send(report);
    },
  );
}
