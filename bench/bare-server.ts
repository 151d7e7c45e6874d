import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

/**
 * The baseline of the benchmarks: a bare Fastify route answering fixed JSON, with no auth, no NATS
 * and no database. Usage: node dist/bench/bare-server.js <port> <method> <route> <json-file>
 */
const [port, method, route, file] = process.argv.slice(2);
if (!port || !method || !route || !file) throw new Error('usage: bare-server <port> <method> <route> <json-file>');
const body: unknown = JSON.parse(readFileSync(file, 'utf8'));

const app = Fastify({ logger: false });
app.route({ method: method as 'GET', url: route, handler: async () => body });
await app.listen({ host: '127.0.0.1', port: Number(port) });
process.stdout.write('ready\n');
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
