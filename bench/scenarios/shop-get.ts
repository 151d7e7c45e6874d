import { formatCpu } from '../cpu.js';
import { formatLoad, load, startBench, type LoadResult } from '../harness.js';

/**
 * GET /{project}/shops/{id} through the full path (edge → NATS → shops worker → Postgres), beside
 * the same JSON from a bare Fastify route, both in the bench's process (the baseline) and in
 * a process of its own (stricter: it does not share a core with autocannon).
 * Goal (issue 2): full ≥ 25% of bare, p99 ≤ 20 ms at 50 connections.
 */
export async function shopGet(): Promise<string[]> {
  const bench = await startBench();
  try {
    const project = 'bench-shops';
    const token = await bench.token({ project, permissions: ['shopsRead', 'shopsWrite'] });
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    for (let i = 0; i < 200; i++) {
      const res = await fetch(`${bench.url}/${project}/shops`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ id: `shop-${i}`, name: `Shop ${i}`, externalId: `E-${i}`, city: 'Berlin', street: 'Torstraße 1', zip: '10119', country: 'DE', lat: 52.5, lon: 13.4, openingHoursSpecification: [{ dayOfWeek: 'MONDAY', opens: '08:00', closes: '20:00' }], services: ['parking'] }),
      });
      if (res.status !== 201) throw new Error(`seeding failed: ${res.status} ${await res.text()}`);
    }
    const path = `/${project}/shops/shop-42`;
    const body: unknown = await (await fetch(`${bench.url}${path}`, { headers })).json();
    const inProcessUrl = await bench.bareServerInProcess('GET', '/:project/shops/:id', body);
    const ownProcessUrl = await bench.bareServer('GET', '/:project/shops/:id', body);

    const full = await load({ url: `${bench.url}${path}`, headers, cpu: bench.cpu });
    const bareInProcess = await load({ url: `${inProcessUrl}${path}` });
    const bareOwnProcess = await load({ url: `${ownProcessUrl}${path}` });
    return [
      'shop get, 50 connections',
      formatLoad('  full path (edge→NATS→worker→PG)', full),
      formatCpu(full.cpu!, full.requests, 'request'),
      formatLoad('  bare route, in the bench process', bareInProcess),
      formatLoad('  bare route, in its own process', bareOwnProcess),
      goalLine('  vs in-process bare', full, bareInProcess),
      goalLine('  vs own-process bare', full, bareOwnProcess),
    ];
  } finally {
    await bench.close();
  }
}

function goalLine(label: string, full: LoadResult, bare: LoadResult): string {
  const ratio = full.requestsPerSecond / bare.requestsPerSecond;
  const met = ratio >= 0.25 && full.p99 <= 20;
  return `${label}: ratio ${(ratio * 100).toFixed(1)}%   goal ≥ 25% and p99 ≤ 20 ms: ${met ? 'met' : 'NOT met'}`;
}
