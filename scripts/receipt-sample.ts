import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startBench } from '../bench/harness.js';
import { gs1CheckDigit } from '../src/domain/codes.js';
import { checkoutPrice } from '../src/domain/tax.js';
import { projectRoot } from '../src/infra/project-root.js';

/**
 * npm run build && node dist/scripts/receipt-sample.js [out.png]
 *
 * Makes the receipt picture of the README and docs/api.md (docs/receipt.png) from a receipt the
 * service produced: starts the service as the benchmarks do (a fresh database on BENCH_DATABASE_URL's server, default the
 * local Postgres, and a nats-server of its own), seeds a shop and a catalog through the API, runs a
 * checkout with weighed goods, deposits, two tax rates and a discount, pays it at a terminal, asks
 * for the receipt, and renders its first page with pdftoppm (poppler-utils). The sale is signed by
 * the local signer, as with `npm start` and nothing configured, so the picture shows the TSE block
 * and the DFKA QR code.
 */
const run = promisify(execFile);
const project = 'acme-1a2b';

async function main(): Promise<void> {
  const out = process.argv[2] ?? path.join(projectRoot(), 'docs', 'receipt.png');
  const bench = await startBench();
  const dir = await mkdtemp(path.join(tmpdir(), 'receipt-sample-'));
  try {
    const token = await bench.token({
      project,
      permissions: ['projectsWrite', 'shopsWrite', 'productsWrite', 'pricingWrite', 'productsRead', 'updatePricingCheckoutProcess', 'setPaymentState', 'ordersRead'],
    });
    const call = async (method: string, route: string, body: unknown, type = 'application/json') => {
      const res = await fetch(`${bench.url}/${project}${route}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': type },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await res.text();
      if (!res.ok || text.includes('"status":"error"')) throw new Error(`${method} ${route}: ${res.status} ${text.slice(0, 300)}`);
      // Batches answer one result per line (ndjson); only single JSON answers are read.
      return type === 'application/json' ? (JSON.parse(text) as unknown) : text;
    };
    const ndjson = (items: object[]) => items.map((i) => JSON.stringify(i)).join('\n');
    const eur = (price: string) => [{ price, currency: 'EUR', tier: 'list' }];

    await call('PUT', '/settings', {
      currency: 'EUR',
      taxRates: { normal: '19', reduced: '7' },
      paymentMethods: ['cash', 'girocard'],
      locale: 'de-DE',
      companyName: 'Acme Lebensmittel GmbH',
      taxNumber: '27/123/45678',
      vatID: 'DE298765432',
      companyAdress: { street: 'Friedrichstraße 100', zip: '10117', city: 'Berlin', country: 'Deutschland' },
      fiscalization: { provider: 'local' },
    });
    await call('POST', '/shops', { id: 'mitte', name: 'Acme Markt Berlin-Mitte', externalId: 'B-001', street: 'Torstraße 94', zip: '10119', city: 'Berlin' });
    await call('POST', '/products/_batch', ndjson([
      { sku: 'MILK', name: 'Frische Vollmilch 3,5 % 1 l', taxCategory: 'reduced', depositProduct: 'DEP-015' },
      { sku: 'DEP-015', name: 'Pfand 0,15', taxCategory: 'normal' },
      { sku: 'DEP-025', name: 'Pfand 0,25', taxCategory: 'normal' },
      { sku: 'WATER', name: 'Mineralwasser still 1,5 l', taxCategory: 'normal', depositProduct: 'DEP-025' },
      { sku: 'APPLE', name: 'Äpfel Elstar', productType: 'weighable', referenceUnit: 'kg', encodingUnit: 'g', pluSet: ['4011'], taxCategory: 'reduced' },
      { sku: 'CHEESE', name: 'Bergkäse am Stück', productType: 'weighable', referenceUnit: 'kg', encodingUnit: 'g', pluSet: ['12345'], taxCategory: 'reduced' },
      { sku: 'ROLL', name: 'Weizenbrötchen', referenceUnit: 'piece', pluSet: ['777'], taxCategory: 'reduced' },
      { sku: 'COFFEE', name: 'Röstkaffee ganze Bohne 500 g', taxCategory: 'reduced' },
      { sku: 'SOAP', name: 'Flüssigseife Nachfüllpack', taxCategory: 'normal' },
    ]), 'application/x-ndjson');
    await call('POST', '/pricing/v2/category/batch', ndjson([
      { sku: 'MILK', category: 'default', prices: eur('1.19') },
      { sku: 'DEP-015', category: 'default', prices: eur('0.15') },
      { sku: 'DEP-025', category: 'default', prices: eur('0.25') },
      { sku: 'WATER', category: 'default', prices: eur('0.59') },
      { sku: 'APPLE', category: 'default', prices: eur('2.99') },
      { sku: 'CHEESE', category: 'default', prices: eur('24.90') },
      { sku: 'ROLL', category: 'default', prices: eur('0.35') },
      { sku: 'COFFEE', category: 'default', prices: eur('8.99') },
      { sku: 'SOAP', category: 'default', prices: eur('2.45') },
    ]), 'application/x-ndjson');

    const code = (first12: string) => `${first12}${gs1CheckDigit(first12)}`;
    const info = (await call('POST', '/checkout/info', {
      shopID: 'mitte',
      appUserID: 'app-user-1',
      clientID: 'phone-1',
      items: [
        { id: 'milk', sku: 'MILK', amount: 2 },
        { id: 'water', sku: 'WATER', amount: 6 },
        { id: 'apples', scannedCode: '4011', amount: 1, weight: 1234, weightUnit: 'g' },
        { id: 'cheese', scannedCode: code('231234500312'), amount: 1 },
        { id: 'rolls', scannedCode: code('270077700006'), amount: 1 },
        { id: 'coffee', sku: 'COFFEE', amount: 1 },
        { id: 'soap', sku: 'SOAP', amount: 1 },
      ],
    })) as { checkoutInfo: { lineItems: Array<{ totalPrice: number; taxRate: string }> } };
    const created = (await call('POST', '/checkout/process', { signedCheckoutInfo: info, paymentMethod: 'girocard' })) as { id: string };
    const processPath = `/checkout/process/${created.id}`;
    const lineItems = [
      ...info.checkoutInfo.lineItems,
      { id: 'promo-coffee', type: 'promotion', name: 'Aktion: Kaffee -1,00 €', refersTo: 'coffee', sku: '', amount: 1, price: -100, totalPrice: -100, taxRate: '7' },
    ];
    await call('PATCH', processPath, { pricing: { lineItems, price: checkoutPrice(lineItems) } });
    await call('PATCH', processPath, { paymentState: 'processing' });
    await call('PATCH', processPath, {
      paymentState: 'successful',
      paymentResult: { pan: '6805123412349876', aid: '081547', time: new Date().toISOString(), paymentType: '00' },
    });

    // The receipt is made once the sale is signed (a fiscal job): asked for earlier, it is a 503.
    let receipt = await fetch(`${bench.url}/${project}/orders/${created.id}/receipt`, { headers: { authorization: `Bearer ${token}` } });
    for (let tries = 0; receipt.status === 503 && tries < 20; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      receipt = await fetch(`${bench.url}/${project}/orders/${created.id}/receipt`, { headers: { authorization: `Bearer ${token}` } });
    }
    if (receipt.status !== 200) throw new Error(`receipt: ${receipt.status} ${await receipt.text()}`);
    const pdf = path.join(dir, 'receipt.pdf');
    await writeFile(pdf, Buffer.from(await receipt.arrayBuffer()));
    const target = out.replace(/\.png$/, '');
    await run('pdftoppm', ['-png', '-r', '80', '-singlefile', pdf, target]);
    process.stdout.write(`${target}.png from the receipt of order ${created.id}\n`);
  } finally {
    await rm(dir, { recursive: true, force: true });
    await bench.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
