import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import type { ZodApp } from '../schemas.js';
import { ChildStates } from '../../infra/supervise.js';
import { RetryAfterSeconds } from '../errors.js';
import type { EdgeDrain } from '../shutdown.js';

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

const ReadyReport = HealthReport.extend({
  draining: z.literal(true).optional().describe('Present while the process shuts down (SIGTERM): it finishes what it holds and takes nothing new'),
});

/** The report with 200 when it is ok, else 503 with Retry-After. */
function send(reply: FastifyReply, report: HealthReport & { draining?: true }): FastifyReply {
  if (report.status === 'ok') return reply.code(200).send(report);
  return reply.code(503).header('retry-after', String(RetryAfterSeconds)).send(report);
}

export function healthRoutes(app: ZodApp, check: HealthCheck, drain: EdgeDrain): void {
  app.get(
    '/health/live',
    {
      schema: {
        tags: ['system'],
        summary: 'Liveness: 200 while the process runs and answers (whatever NATS and Postgres do)',
        response: { 200: z.object({ status: z.literal('ok') }) },
      },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/health/ready',
    {
      schema: {
        tags: ['system'],
        summary: 'Readiness: 200 when this edge can serve (NATS connected, Postgres reachable, migrations applied); 503 naming what is missing, or while it shuts down',
        response: { 200: ReadyReport, 503: ReadyReport },
      },
    },
    async (_request, reply) => {
      const report = await check();
      return send(reply, drain.draining ? { ...report, status: 'unavailable', draining: true } : report);
    },
  );

  app.get(
    '/health',
    {
      schema: {
        tags: ['system'],
        summary: 'Health: 200 only when NATS and Postgres answer and every migration is applied',
        response: { 200: HealthReport, 503: HealthReport },
      },
    },
    async (_request, reply) => send(reply, await check()),
  );
}
