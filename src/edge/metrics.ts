import type { FastifyInstance } from 'fastify';
import { scrape, type Metrics } from '../infra/metrics.js';

/**
 * The edge's HTTP metrics: every answer is counted by method, route pattern (`/:project/shops/:id`,
 * never the URL: its cardinality is the routes') and status, with its latency. Requests no route
 * matched count as `unmatched`. With `serve`, `/metrics` answers the scrape on the edge's own port
 * (METRICS_PORT unset; no token: keep it off the public load balancer).
 */
export function registerMetrics(app: FastifyInstance, metrics: Metrics, options: { serve: boolean }): void {
  const { httpRequests } = metrics;
  app.addHook('onResponse', (request, reply, done) => {
    httpRequests.observe({ method: request.method, route: request.routeOptions.url ?? 'unmatched', status: reply.statusCode }, reply.elapsedTime / 1000);
    done();
  });
  if (!options.serve) return;
  app.get(
    '/metrics',
    { schema: { tags: ['system'], summary: 'Metrics in the Prometheus text format (docs/operations.md, "Metrics"); on METRICS_PORT instead when it is set' } },
    async (_request, reply) => {
      const { contentType, body } = await scrape(metrics);
      return reply.type(contentType).send(body);
    },
  );
}
