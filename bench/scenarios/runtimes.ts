import { execFileSync } from 'node:child_process';
import { formatCpu } from '../cpu.js';
import { formatLoad, loadInTurns, startBench, type Bench, type LoadOptions, type LoadResult } from '../harness.js';
import { instoreCode, seedCatalog, sku } from '../seed.js';
import { fixtureProduct } from '../fixtures.js';

/**
 * The same service on two Node.js runtimes, side by side in one run: BENCH_NODES names the node
 * binaries (comma-separated; default: the bench's own and the first other `node` found among
 * /usr/bin/node and /usr/local/bin/node). Each gets a service of its own (its own database and
 * nats-server), and the same loads drive them in alternating turns from this one process: shop
 * get and checkout info, as fast as answers come (50 connections) and at a fixed rate that neither
 * saturates (so that the CPU per request compares work done, not how well a busy machine batches).
 */
export async function runtimesScenario(): Promise<string[]> {
  const nodes = runtimes();
  if (nodes.length < 2) return ['runtimes: only one node binary found; set BENCH_NODES=/path/to/node20,/path/to/node24'];
  const benches: Array<{ version: string; bench: Bench }> = [];
  try {
    for (const node of nodes) benches.push({ version: versionOf(node), bench: await startBench({ node }) });
    const shop = await Promise.all(benches.map(({ bench }) => shopGetTarget(bench)));
    const checkout = await Promise.all(benches.map(({ bench }) => checkoutInfoTarget(bench)));
    const lines = [`runtimes: ${benches.map((b) => b.version).join(' against ')} (the load generator: node ${process.version})`];
    const compare = async (title: string, targets: LoadOptions[], operation: string) => {
      const results = await loadInTurns(targets, 3);
      lines.push(title);
      results.forEach((r: LoadResult, i) => {
        lines.push(formatLoad(`  node ${benches[i]!.version}`, r));
        lines.push(formatCpu(r.cpu!, r.requests, operation));
      });
    };
    await compare('shop get, 50 connections', shop, 'request');
    await compare('shop get, 1500 req/s', shop.map((t) => ({ ...t, overallRate: 1500 })), 'request');
    await compare('checkout info, 50 connections', checkout, 'checkout info');
    await compare('checkout info, 800 req/s', checkout.map((t) => ({ ...t, overallRate: 800 })), 'checkout info');
    return lines;
  } finally {
    for (const { bench } of benches) await bench.close();
  }
}

function runtimes(): string[] {
  const configured = process.env.BENCH_NODES?.split(',').map((s) => s.trim()).filter(Boolean);
  if (configured?.length) return configured;
  const others = ['/usr/bin/node', '/usr/local/bin/node'].filter((n) => exists(n) && versionOf(n) !== process.version);
  return [process.execPath, ...others.slice(0, 1)];
}

function exists(file: string): boolean {
  try {
    execFileSync(file, ['--version']);
    return true;
  } catch {
    return false;
  }
}

function versionOf(node: string): string {
  return execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
}

/** GET /{project}/shops/{id} of one of 50 shops, with a token that may read them (also the message-plane scenario's). */
export async function shopGetTarget(bench: Bench): Promise<LoadOptions> {
  const project = 'bench-shops';
  const token = await bench.token({ project, permissions: ['shopsRead', 'shopsWrite'] });
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  for (let i = 0; i < 50; i++) {
    const res = await fetch(`${bench.url}/${project}/shops`, { method: 'POST', headers, body: JSON.stringify({ id: `shop-${i}`, name: `Shop ${i}`, city: 'Berlin' }) });
    if (res.status !== 201) throw new Error(`seeding failed: ${res.status} ${await res.text()}`);
  }
  return { url: `${bench.url}/${project}/shops/shop-42`, headers, cpu: bench.cpu };
}

async function checkoutInfoTarget(bench: Bench): Promise<LoadOptions> {
  const project = 'bench-checkout';
  await seedCatalog(bench, project, 20_000);
  const cart = {
    shopID: 'bench-shop',
    session: 'bench',
    items: [
      { sku: sku(20), scannedCode: '10020', amount: 1, weight: 1250, weightUnit: 'g' },
      { scannedCode: instoreCode(3, 10_040, 480), amount: 1 },
      { scannedCode: fixtureProduct(10).codes[0]!.code, amount: 2 },
      { sku: sku(3), amount: 3 },
      { scannedCode: instoreCode(1, 10_060, 399), amount: 1 },
      ...[101, 102, 103, 104, 105].map((i) => ({ sku: sku(i), amount: 1 })),
    ],
  };
  const token = await bench.token({ project, permissions: ['productsRead'] });
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const body = JSON.stringify(cart);
  const probe = await fetch(`${bench.url}/${project}/checkout/info`, { method: 'POST', headers, body });
  if (probe.status !== 200) throw new Error(`checkout info answered ${probe.status}: ${await probe.text()}`);
  return { url: `${bench.url}/${project}/checkout/info`, method: 'POST', headers, body, cpu: bench.cpu };
}
