import { readFileSync } from 'node:fs';
import Fastify from 'fastify';
import type { BareRoute } from './harness.js';

/**
 * The baseline of the benchmarks: bare Fastify routes answering fixed JSON, with no auth, no NATS
 * and no database. Usage: node dist/bench/bare-server.js <port> <routes-json-file>, the file an
 * array of BareRoute (harness.ts). A route with several bodies answers them in turn.
 */
const [port, file] = process.argv.slice(2);
if (!port || !file) throw new Error('usage: bare-server <port> <routes-json-file>');
const routes = JSON.parse(readFileSync(file, 'utf8')) as BareRoute[];

const app = Fastify({ logger: false });
// The PoS's PATCH bodies (application/merge-patch+json) are JSON, parsed as the service parses them.
app.addContentTypeParser('application/merge-patch+json', { parseAs: 'string' }, app.getDefaultJsonParser('error', 'error'));
for (const { method, route, status, bodies } of routes) {
  // Parsed once: Fastify serializes the answer as a route returning an object does.
  const answers = bodies.map((body): unknown => JSON.parse(body));
  let next = 0;
  app.route({ method: method as 'GET', url: route, handler: async (_request, reply) => reply.code(status).send(answers[next++ % answers.length]) });
}
await app.listen({ host: '127.0.0.1', port: Number(port) });
process.stdout.write('ready\n');
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
