import { cpus } from 'node:os';
import { capacityScenario } from './scenarios/capacity.js';
import { checkoutInfoScenario } from './scenarios/checkout-info.js';
import { costScenario } from './scenarios/cost.js';
import { closingScenario } from './scenarios/closing.js';
import { fiscalScenario } from './scenarios/fiscal.js';
import { fullFlowScenario } from './scenarios/full-flow.js';
import { portalScenario } from './scenarios/portal.js';
import { floorScenario } from './scenarios/floor.js';
import { fulfillmentScenario } from './scenarios/fulfillment.js';
import { importScenario } from './scenarios/import.js';
import { integrationPullScenario } from './scenarios/integration-pull.js';
import { messagePlaneScenario } from './scenarios/message-plane.js';
import { receiptScenario } from './scenarios/receipt.js';
import { runtimesScenario } from './scenarios/runtimes.js';
import { shopGet } from './scenarios/shop-get.js';
import { tokensScenario } from './scenarios/tokens.js';
import { webhooksScenario } from './scenarios/webhooks.js';

/**
 * npm run bench [-- <scenario> ...]: runs the scenarios (all by default) and prints their figures,
 * each beside a baseline measured in the same run. BENCH_DURATION sets the seconds per measurement.
 */
const scenarios: Record<string, () => Promise<string[]>> = {
  'shop-get': shopGet,
  import: importScenario,
  'checkout-info': checkoutInfoScenario,
  'full-flow': fullFlowScenario,
  fulfillment: fulfillmentScenario,
  closing: closingScenario,
  receipt: receiptScenario,
  fiscal: fiscalScenario,
  portal: portalScenario,
  capacity: capacityScenario,
  runtimes: runtimesScenario,
  'message-plane': messagePlaneScenario,
  webhooks: webhooksScenario,
  'integration-pull': integrationPullScenario,
  cost: costScenario,
  tokens: tokensScenario,
  floor: floorScenario,
};

const chosen = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const unknown = chosen.filter((name) => !(name in scenarios));
if (unknown.length) {
  process.stderr.write(`unknown scenario ${unknown.join(', ')}; known: ${Object.keys(scenarios).join(', ')}\n`);
  process.exit(2);
}

process.stdout.write(`checkout-platform benchmarks on ${cpus().length} cores, node ${process.version}\n\n`);
for (const name of chosen.length ? chosen : Object.keys(scenarios)) {
  const lines = await scenarios[name]!();
  process.stdout.write(`${lines.join('\n')}\n\n`);
}
