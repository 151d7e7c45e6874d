import t from 'tap';
import { PromotionEvent, type Group } from '../subjects/promotions.js';
import { watchEvents } from './support/checkout.js';
import { startTestService, TestProject } from './support/service.js';

/**
 * Promotion configurations over HTTP: create, read, list, replace, activate; validation that names
 * the exact problem; permissions; exactly one active configuration, also under concurrent
 * activations; events of every change.
 */
const svc = await startTestService(t);
const reader = await svc.token(['promotionsRead']);
const writer = await svc.token(['promotionsRead', 'promotionsWrite']);
const writeOnly = await svc.token(['promotionsWrite']);
const events = await watchEvents(t, svc);
const base = `/${TestProject}/promotions/configurations`;

const coffeeWeek = {
  rounding: { mode: 'up', precision: 0 },
  ranks: [
    { id: 'article_promotion', evaluationMode: 'applyAll' },
    { id: 'receipt_promotion', evaluationMode: 'selectBest' },
  ],
  groups: [
    {
      id: 'winter',
      condition: { type: 'isCurrentlyActive', args: { from: '2026-11-01T00:00:00+01:00', to: '2027-03-01T00:00:00+01:00' } },
      rules: [
        {
          id: 'second-coffee',
          rankID: 'article_promotion',
          condition: { type: 'and', children: [{ type: 'hasSKU', args: { oneOf: 'COFFEE-1,COFFEE-2' } }, { type: 'amountGreaterOrEqual', args: { value: '2' } }] },
          actions: [{ type: 'addLineItemDiscount', args: { absolute: 'true', value: '1', requiredAmount: '2', amount: '1', isMultiusable: 'true', name: '1 € off the second coffee' } }],
        },
        {
          id: 'ten-above-fifty',
          rankID: 'receipt_promotion',
          condition: { type: 'totalGreaterThanOrEqual', args: { value: '50' } },
          actions: [{ type: 'addCartDiscount', args: { value: '10', name: '10 % off above 50 €' } }],
        },
      ],
    },
    {
      id: 'coupons',
      rules: [
        {
          id: 'cap',
          rankID: 'receipt_promotion',
          condition: { type: 'hasCouponCode', args: { equals: 'CAP5' } },
          actions: [{ type: 'redeemCouponCode', args: { code: 'CAP5' } }, { type: 'addCartDiscount', args: { absolute: 'true', value: '5' } }, { type: 'addForceControl' }],
        },
      ],
    },
  ],
};

async function stored(): Promise<Array<{ id: number; active: boolean; version: number }>> {
  return svc.sql<Array<{ id: number; active: boolean; version: number }>>`select id, active, version from promotion_configurations order by id`;
}

async function catalogVersion(): Promise<string | undefined> {
  const [row] = await svc.sql<{ version: string }[]>`select version::text from catalog_versions where project = ${TestProject}`;
  return row?.version;
}

t.test('creates a configuration with the next free id, not active, and reads it back', async (t) => {
  const res = await svc.request('POST', base, { token: writer, body: { ...coffeeWeek, projectID: 'someone-else', active: true } });
  t.equal(res.status, 201, res.text);
  t.same(res.body, { id: 1, projectID: TestProject, active: false, ...coffeeWeek }, 'the platform decides id, projectID and active');
  t.equal(res.headers.get('location'), `${base}/1`);
  const got = await svc.request('GET', `${base}/1`, { token: reader });
  t.equal(got.status, 200);
  t.same(got.body, res.body);
});

t.test('creates with the client\'s id; the next free id follows the largest; an id that exists is 409', async (t) => {
  const own = await svc.request('POST', base, { token: writer, body: { ...coffeeWeek, id: 10 } });
  t.equal(own.status, 201);
  t.equal(own.body.id, 10);
  const next = await svc.request('POST', base, { token: writer, body: { ranks: [], groups: [] } });
  t.equal(next.status, 201);
  t.same(next.body, { id: 11, projectID: TestProject, active: false, rounding: { mode: 'halfUp', precision: 0 }, ranks: [], groups: [] }, 'rounding defaults to halfUp to the subunit');
  const before = await stored();
  const again = await svc.request('POST', base, { token: writer, body: { ranks: [], groups: [], id: 10 } });
  t.equal(again.status, 409);
  t.same(again.body, { error: { type: 'conflict', message: 'a promotion configuration with id 10 already exists' } });
  t.same(await stored(), before, 'nothing changed');
});

t.test('lists the configurations by id as {configurations}', async (t) => {
  const res = await svc.request('GET', base, { token: reader });
  t.equal(res.status, 200);
  t.same(res.body.configurations.map((c: { id: number; active: boolean }) => [c.id, c.active]), [[1, false], [10, false], [11, false]]);
  t.same(res.body.configurations[0], { id: 1, projectID: TestProject, active: false, ...coffeeWeek });
});

t.test('replaces a configuration; a body id that differs from the path and an unknown id are refused', async (t) => {
  const changed = { ...coffeeWeek, rounding: { mode: 'halfEven', precision: 1 } };
  const res = await svc.request('PUT', `${base}/10`, { token: writer, body: changed });
  t.equal(res.status, 200);
  t.same(res.body, { id: 10, projectID: TestProject, active: false, ...changed });
  t.same((await svc.request('GET', `${base}/10`, { token: reader })).body, res.body);

  const before = await stored();
  const other = await svc.request('PUT', `${base}/10`, { token: writer, body: { ...changed, id: 11 } });
  t.equal(other.status, 400);
  t.same(other.body, { error: { type: 'bad_request', message: 'the body\'s id 11 differs from the path\'s id 10' } });
  const missing = await svc.request('PUT', `${base}/99`, { token: writer, body: changed });
  t.equal(missing.status, 404);
  t.same(missing.body, { error: { type: 'not_found', message: 'no promotion configuration with id 99' } });
  const notInt = await svc.request('GET', `${base}/abc`, { token: reader });
  t.equal(notInt.status, 400);
  t.equal(notInt.body.error.type, 'bad_request');
  t.same(await stored(), before, 'nothing changed');
});

t.test('validation names the exact path and problem, lists every problem, and stores nothing', async (t) => {
  const rule = (over: object) => ({ id: 'r1', rankID: 'main', actions: [{ type: 'addForceControl' }], ...over });
  const config = (...rules: object[]) => ({ ranks: [{ id: 'main', evaluationMode: 'applyAll' }], groups: [{ id: 'g', rules }] });
  const rows: Array<[string, object, string]> = [
    ['a rankID that names no rank', config(rule({ rankID: 'nope' })), 'groups[0].rules[0].rankID: no rank "nope" (ranks: "main")'],
    [
      'rule ids repeat across groups',
      { ranks: [{ id: 'main', evaluationMode: 'applyAll' }], groups: [{ id: 'a', rules: [rule({})] }, { id: 'b', rules: [rule({})] }] },
      'groups[1].rules[0].id: the rule id "r1" is already used by groups[0].rules[0]',
    ],
    ['group ids repeat', { ranks: [], groups: [{ id: 'a', rules: [] }, { id: 'a', rules: [] }] }, 'groups[1].id: the group id "a" is already used by groups[0]'],
    ['rank ids repeat', { ranks: [{ id: 'x', evaluationMode: 'applyAll' }, { id: 'x', evaluationMode: 'selectBest' }], groups: [] }, 'ranks[1].id: the rank id "x" is already used by ranks[0]'],
    [
      'an action without its required argument',
      config(rule({ id: 'a' }), rule({ id: 'b' }), rule({ id: 'c', actions: [{ type: 'addLineItemDiscount', args: { absolute: 'true' } }] })),
      'groups[0].rules[2].actions[0]: addLineItemDiscount needs value',
    ],
    [
      'an unknown condition type',
      config(rule({ condition: { type: 'and', children: [{ type: 'hasSKU', args: { equals: 'A' } }, { type: 'hasColor', args: { equals: 'red' } }] } })),
      'groups[0].rules[0].condition.children[1].type: unknown condition type "hasColor" (known: and, or, isCurrentlyActive, hasSKU, amountGreaterOrEqual, totalGreaterThanOrEqual, hasExternalShopID, hasCouponCode, isReferredToByCoupon, isExclusiveForLineItem, grantedDiscountGreaterThanOrEqual)',
    ],
    [
      'an unknown action type',
      config(rule({ actions: [{ type: 'addLoyaltyPoints' }] })),
      'groups[0].rules[0].actions[0].type: unknown action type "addLoyaltyPoints" (known: addLineItemDiscount, addCartDiscount, redeemCouponCode, modifyPrice, redeemReferringCoupon, addForceControl)',
    ],
    [
      'money with more decimals than the currency has',
      config(rule({ actions: [{ type: 'addCartDiscount', args: { absolute: 'true', value: '1.999' } }] })),
      'groups[0].rules[0].actions[0].args.value: "1.999" is not an amount in EUR (decimal text in currency units with at most 2 decimals, such as "1.50")',
    ],
    [
      'a percentage above 100',
      config(rule({ actions: [{ type: 'modifyPrice', args: { value: '150' } }] })),
      'groups[0].rules[0].actions[0].args.value: "150" is not a percentage (decimal text from 0 to 100, such as "10" or "12.5")',
    ],
    ['a boolean that is not "true" or "false"', config(rule({ actions: [{ type: 'addCartDiscount', args: { absolute: 'yes', value: '1' } }] })), 'groups[0].rules[0].actions[0].args.absolute: "yes" is not "true" or "false"'],
    [
      'a time that is not RFC 3339',
      config(rule({ condition: { type: 'isCurrentlyActive', args: { from: '1.12.2026' } } })),
      'groups[0].rules[0].condition.args.from: "1.12.2026" is not an RFC 3339 time (such as "2026-12-01T00:00:00+01:00")',
    ],
    ['a time window that ends before it starts', config(rule({ condition: { type: 'isCurrentlyActive', args: { from: '2026-12-02T00:00:00Z', to: '2026-12-01T00:00:00Z' } } })), 'groups[0].rules[0].condition: isCurrentlyActive needs from before to'],
    ['and without children', { ranks: [], groups: [{ id: 'g', condition: { type: 'and' }, rules: [] }] }, 'groups[0].condition: and needs children'],
    ['hasSKU without equals or oneOf', config(rule({ condition: { type: 'hasSKU' } })), 'groups[0].rules[0].condition: hasSKU needs equals or oneOf'],
    [
      'grantedDiscountGreaterThanOrEqual naming an unknown rule',
      config(rule({ condition: { type: 'grantedDiscountGreaterThanOrEqual', args: { ruleIDs: 'r1,ghost', value: '1' } } })),
      'groups[0].rules[0].condition.args.ruleIDs: no rule "ghost" in this configuration',
    ],
    [
      'more units discounted than required per application',
      config(rule({ actions: [{ type: 'addLineItemDiscount', args: { value: '10', requiredAmount: '2', amount: '3' } }] })),
      'groups[0].rules[0].actions[0]: addLineItemDiscount discounts at most the requiredAmount (2) units per application, not 3',
    ],
    ['a count that is not a whole number', config(rule({ condition: { type: 'amountGreaterOrEqual', args: { value: '1.5' } } })), 'groups[0].rules[0].condition.args.value: "1.5" is not a whole number of at least 0'],
  ];
  const before = await stored();
  for (const [name, body, message] of rows) {
    const res = await svc.request('POST', base, { token: writer, body });
    t.equal(res.status, 400, name);
    t.same(res.body, { error: { type: 'bad_request', message, details: [{ path: message.slice(0, message.indexOf(': ')), message }] } }, name);
  }
  const several = await svc.request('POST', base, { token: writer, body: config(rule({ rankID: 'nope', actions: [{ type: 'modifyPrice' }, { type: 'teleport' }] })) });
  t.equal(several.status, 400);
  t.equal(several.body.error.message, 'groups[0].rules[0].rankID: no rank "nope" (ranks: "main") (and 2 more: see details)', 'every problem is found');
  t.same(
    several.body.error.details.map((d: { path: string }) => d.path),
    ['groups[0].rules[0].rankID', 'groups[0].rules[0].actions[0]', 'groups[0].rules[0].actions[1].type'],
  );

  const structural: Array<[string, object, RegExp]> = [
    ['ranks missing', { groups: [] }, /^invalid body: ranks: /],
    ['an unknown rounding mode', { rounding: { mode: 'sideways', precision: 0 }, ranks: [], groups: [] }, /^invalid body: rounding\.mode: /],
    ['an unknown evaluation mode', { ranks: [{ id: 'x', evaluationMode: 'random' }], groups: [] }, /^invalid body: ranks\.0\.evaluationMode: /],
    ['an argument that is not a string', config(rule({ actions: [{ type: 'addCartDiscount', args: { value: 1 } }] })), /^invalid body: groups\.0\.rules\.0\.actions\.0\.args\.value: /],
  ];
  for (const [name, body, message] of structural) {
    const res = await svc.request('POST', base, { token: writer, body });
    t.equal(res.status, 400, name);
    t.equal(res.body.error?.type, 'bad_request', `${name}: wrapped`);
    t.match(res.body.error?.message, message, name);
  }
  const unstorable = await svc.request('POST', base, { token: writer, body: config(rule({ id: 'r\u0000' })) });
  t.equal(unstorable.status, 400, 'text Postgres cannot store');
  t.match(unstorable.body.error.message, /groups\.0\.rules\.0\.id holds the character U\+0000/);
  const replaced = await svc.request('PUT', `${base}/1`, { token: writer, body: config(rule({ rankID: 'nope' })) });
  t.equal(replaced.status, 400, 'a replacement is checked the same way');
  t.same(await stored(), before, 'nothing was stored or changed');
});

t.test('money arguments are read in the project currency', async (t) => {
  const settings = await svc.token(['projectsWrite']);
  const put = await svc.request('PUT', `/${TestProject}/settings`, { token: settings, body: { currency: 'JPY', taxRates: { normal: '10' }, paymentMethods: ['cash'] } });
  t.equal(put.status, 200, put.text);
  t.teardown(async () => {
    await svc.request('PUT', `/${TestProject}/settings`, { token: settings, body: { currency: 'EUR', taxRates: { normal: '19', reduced: '7' }, paymentMethods: ['cash'] } });
  });
  const body = (value: string) => ({ ranks: [{ id: 'm', evaluationMode: 'applyAll' }], groups: [{ id: 'g', rules: [{ id: 'r', rankID: 'm', actions: [{ type: 'addCartDiscount', args: { absolute: 'true', value } }] }] }] });
  const yen = await svc.request('POST', base, { token: writer, body: body('1.5') });
  t.equal(yen.status, 400);
  t.match(yen.body.error.message, /"1\.5" is not an amount in JPY \(decimal text in currency units with at most 0 decimals, such as "150"\)/);
});

t.test('permissions: promotionsRead to read, promotionsWrite to change; errors are wrapped', async (t) => {
  const before = await stored();
  const cases: Array<[string, string, string | undefined, object?]> = [
    ['GET', base, undefined],
    ['GET', `${base}/1`, writeOnly],
    ['GET', `${base}/active`, writeOnly],
    ['POST', base, reader, coffeeWeek],
    ['PUT', `${base}/1`, reader, coffeeWeek],
    ['POST', `${base}/1/activate`, reader],
    ['GET', base, await svc.token(['promotionsRead'], { project: 'other-project' })],
  ];
  for (const [method, path, token, body] of cases) {
    const res = await svc.request(method, path, { token, body });
    t.equal(res.status, 403, `${method} ${path}`);
    t.equal(res.body.error?.type, 'forbidden', `${method} ${path}: wrapped`);
  }
  t.same(await stored(), before, 'nothing changed');
});

t.test('activation: exactly one active configuration; the switch is one statement; activating it again changes nothing', async (t) => {
  const none = await svc.request('GET', `${base}/active`, { token: reader });
  t.equal(none.status, 404);
  t.same(none.body, { error: { type: 'not_found', message: 'no promotion configuration is active' } });

  const versionBefore = await catalogVersion();
  const first = await svc.request('POST', `${base}/1/activate`, { token: writer });
  t.equal(first.status, 200);
  t.same(first.body, { id: 1, projectID: TestProject, active: true, ...coffeeWeek });
  t.same((await svc.request('GET', `${base}/active`, { token: reader })).body, first.body);
  t.not(await catalogVersion(), versionBefore, 'the project has a new catalog version: cached checkout data is stale');

  const second = await svc.request('POST', `${base}/10/activate`, { token: writer });
  t.equal(second.status, 200);
  t.equal(second.body.active, true);
  t.same((await stored()).filter((c) => c.active).map((c) => c.id), [10], 'the other one is no longer active');
  const list = await svc.request('GET', base, { token: reader });
  t.same(list.body.configurations.filter((c: { active: boolean }) => c.active).map((c: { id: number }) => c.id), [10]);

  const versionNow = await catalogVersion();
  const again = await svc.request('POST', `${base}/10/activate`, { token: writer });
  t.equal(again.status, 200);
  t.same(again.body, second.body);
  t.equal(await catalogVersion(), versionNow, 'nothing was written');

  const replaced = await svc.request('PUT', `${base}/10`, { token: writer, body: coffeeWeek });
  t.equal(replaced.body.active, true, 'a replacement keeps the configuration active');

  const before = await stored();
  const missing = await svc.request('POST', `${base}/99/activate`, { token: writer });
  t.equal(missing.status, 404);
  t.same(missing.body, { error: { type: 'not_found', message: 'no promotion configuration with id 99' } });
  t.same(await stored(), before, 'the active configuration stays');
});

t.test('20 concurrent activations of different configurations: exactly one active at the end, and never zero or two on the way', async (t) => {
  const ids: number[] = [];
  for (let i = 0; i < 20; i++) {
    const res = await svc.request('POST', base, { token: writer, body: coffeeWeek });
    ids.push(res.body.id as number);
  }
  await events.settle();
  const seenBefore = events.events.length;

  let polling = true;
  const counts = new Map<number, number>();
  const httpAnswers = new Map<string, number>();
  const pollDatabase = (async () => {
    while (polling) {
      const [row] = await svc.sql<{ n: number }[]>`select count(*) filter (where active)::int as n from promotion_configurations where project = ${TestProject}`;
      counts.set(row!.n, (counts.get(row!.n) ?? 0) + 1);
    }
  })();
  const pollHttp = (async () => {
    while (polling) {
      const res = await svc.request('GET', `${base}/active`, { token: reader });
      const key = `${res.status} ${res.body?.active}`;
      httpAnswers.set(key, (httpAnswers.get(key) ?? 0) + 1);
    }
  })();

  const answers = await Promise.all(ids.map((id) => svc.request('POST', `${base}/${id}/activate`, { token: writer })));
  polling = false;
  await Promise.all([pollDatabase, pollHttp]);

  t.same(answers.map((a) => a.status), ids.map(() => 200), 'every activation answered 200');
  t.same([...counts.keys()], [1], `the database always held exactly one active configuration (${counts.get(1)} reads)`);
  t.same([...httpAnswers.keys()], ['200 true'], 'GET active always answered the active configuration');
  const active = (await stored()).filter((c) => c.active);
  t.equal(active.length, 1, 'exactly one active at the end');

  await events.settle();
  const activated = events.events.slice(seenBefore).filter((e) => e.event === 'activated');
  t.equal(activated.length, 20, 'each activation published one event');
  // The switches took turns: each started from the one before, a chain from 10 to the one active now.
  const previous = new Map(activated.map((e) => [e.payload.previousActiveID as number, e.payload.id as number]));
  let at = 10;
  for (let i = 0; i < 20; i++) at = previous.get(at) ?? -1;
  t.equal(at, active[0]!.id, 'the events chain every switch, ending at the active configuration');
});

t.test('every change publishes its event: created, updated, activated', async (t) => {
  await events.settle();
  const ofOne = events.events.filter((e) => e.subject.startsWith(`events.${TestProject}.promotion.1.`));
  t.same(ofOne.map((e) => e.event), ['created', 'activated']);
  const ofTen = events.events.filter((e) => e.subject.startsWith(`events.${TestProject}.promotion.10.`));
  t.same(ofTen.map((e) => e.event), ['created', 'updated', 'activated', 'updated']);
  for (const e of [...ofOne, ...ofTen]) {
    const parsed = PromotionEvent.safeParse(e.payload);
    t.ok(parsed.success, `${e.subject} matches its schema`, { issues: parsed.error?.issues });
    t.match(e.msgId, /^[0-9a-f-]{36}$/);
  }
  t.same(ofTen.map((e) => [e.payload.version, e.payload.configuration.active, e.payload.previousActiveID ?? '-']), [
    [1, false, '-'],
    [2, false, '-'],
    [2, true, 1],
    [3, true, '-'],
  ]);
  t.same(ofOne[0]!.payload.configuration, { id: 1, projectID: TestProject, active: false, ...coffeeWeek });
});

t.test('concurrent creations without an id get distinct next free ids', async (t) => {
  const largest = Math.max(...(await stored()).map((c) => c.id));
  const answers = await Promise.all(Array.from({ length: 10 }, () => svc.request('POST', base, { token: writer, body: { ranks: [], groups: [] } })));
  t.same(answers.map((a) => a.status), answers.map(() => 201));
  t.same(answers.map((a) => a.body.id as number).sort((a, b) => a - b), Array.from({ length: 10 }, (_, i) => largest + 1 + i));
});

t.test('a list larger than a message, of configurations full of characters JSON escapes, travels in parts', async (t) => {
  // Each character is escaped in a configuration's JSON text, and again in a list part: two of these
  // configurations fit in a message as texts, but not as a list part carries them.
  const quotes = '"\\'.repeat(100_000);
  const ids: number[] = [];
  for (let i = 0; i < 3; i++) {
    const body = { ranks: [{ id: 'main', evaluationMode: 'applyAll' }], groups: [{ id: 'g', rules: [{ id: 'r', rankID: 'main', actions: [{ type: 'addCartDiscount', args: { value: '1', name: quotes } }] }] }] };
    const res = await svc.request('POST', base, { token: writer, body });
    t.equal(res.status, 201, res.status === 201 ? `configuration ${res.body.id} created` : res.text.slice(0, 300));
    ids.push(res.body.id as number);
  }
  const res = await svc.request('GET', base, { token: reader });
  t.equal(res.status, 200);
  t.ok(res.text.length > 1024 * 1024, 'the list is larger than a message');
  const listed: Array<{ id: number; groups: Group[] }> = res.body.configurations;
  const all = await svc.sql<{ id: number }[]>`select id from promotion_configurations where project = ${TestProject} order by id`;
  t.same(listed.map((c) => c.id), all.map((c) => c.id), 'every configuration, by id');
  t.same(
    listed.filter((c) => ids.includes(c.id)).map((c) => [c.id, c.groups[0]!.rules[0]!.actions[0]!.args!.name]),
    ids.map((id) => [id, quotes]),
  );
});
