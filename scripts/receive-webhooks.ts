/**
 * Receives the platform's webhooks as an integrator's endpoint would: checks each delivery's
 * signature (Standard Webhooks, with the `standardwebhooks` package) and prints one JSON line per
 * event. docs/integrators.md shows it ("Receiving webhooks").
 *
 *   WEBHOOK_SECRET=whsec_... PORT=3000 node dist/scripts/receive-webhooks.js
 *
 * and a webhook integration whose url is this server (http on loopback needs
 * WEBHOOK_ALLOW_PRIVATE_NETWORKS=true on the platform; a real endpoint is https on a public address).
 */
// --- the example (docs/integrators.md shows it)
import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';

const webhook = new Webhook(process.env.WEBHOOK_SECRET ?? ''); // the `secret` the integration was made with
const seen = new Set<string>(); // keep these in your database, with what you did

createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    let event: { type: string; timestamp: string; data: unknown };
    try {
      // Checks webhook-signature over webhook-id, webhook-timestamp (at most 5 minutes old) and the body as sent.
      event = webhook.verify(body, request.headers as Record<string, string>) as typeof event;
    } catch {
      response.writeHead(400).end('bad signature');
      return;
    }
    const id = String(request.headers['webhook-id']); // the same on every attempt of one event
    if (!seen.has(id)) {
      seen.add(id);
      process.stdout.write(`${JSON.stringify({ id, type: event.type, timestamp: event.timestamp, data: event.data })}\n`);
    }
    response.writeHead(204).end(); // any 2xx: delivered; anything else is tried again later
  });
}).listen(Number(process.env.PORT ?? 3000), () => process.stderr.write(`receiving webhooks on port ${process.env.PORT ?? 3000}\n`));
// --- end of the example
