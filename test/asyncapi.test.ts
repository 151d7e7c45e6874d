import { readdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstreamManager } from '@nats-io/jetstream';
import { Ajv } from 'ajv';
import t, { type Test } from 'tap';
import { projectRoot } from '../src/infra/project-root.js';
import { subjectToken } from '../subjects/common.js';
import { ErrorHeaders, JsonCodec, type Endpoint } from '../subjects/contract.js';
import { EventDomains, EventPayloads, EventStream, EventTypes } from '../subjects/events.js';
import { JobKinds } from '../subjects/jobs.js';
import { seedCheckout, patchPos } from './support/checkout.js';
import { runBuilt, type ServiceProcess } from './support/process.js';
import { startTestService, TestProject } from './support/service.js';

/**
 * /asyncapi.json: the message contract as AsyncAPI 3.0, derived from subjects/, and the integrator
 * example of docs/integrators.md (scripts/follow-events.ts, run as built) following events of a
 * running service.
 */
const require = createRequire(import.meta.url);
const specs = require('@asyncapi/specs') as { schemasWithoutId: Record<string, object> };

type Json = Record<string, any>;
const root = projectRoot();
const svc = await startTestService(t);
const served = await svc.request('GET', '/asyncapi.json');
const doc = served.body as Json;

/** The endpoints a subjects module exports, alone or grouped in an object. */
function endpointsIn(module: Record<string, unknown>): Endpoint[] {
  const isEndpoint = (v: unknown): v is Endpoint => !!v && typeof v === 'object' && typeof (v as Endpoint).subject === 'string' && (v as Endpoint).subject.startsWith('svc.');
  return Object.values(module).flatMap((v) => (isEndpoint(v) ? [v] : v && typeof v === 'object' ? Object.values(v).filter(isEndpoint) : []));
}

const subjectsDir = path.join(root, 'subjects');
const moduleFiles = (await readdir(subjectsDir)).filter((f) => f.endsWith('.ts')).sort();
// Imported beside this test (the .ts sources, or the compiled modules in dist/), so they are the very modules the service runs.
const modules = await Promise.all(
  moduleFiles.map(async (f) => ({ file: f, endpoints: endpointsIn(await import(new URL(`../subjects/${f.replace(/\.ts$/, '.js')}`, import.meta.url).href)) })),
);

/** Resolves a local JSON pointer (`#/a/b`) in the document. */
function resolve(pointer: string): unknown {
  if (!pointer.startsWith('#/')) return undefined;
  return pointer
    .slice(2)
    .split('/')
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce<unknown>((node, token) => (node && typeof node === 'object' ? (node as Json)[token] : undefined), doc);
}

function refsIn(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((v) => refsIn(v, found));
  else if (value && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) {
      if (key === '$ref' && typeof v === 'string') found.push(v);
      else refsIn(v, found);
    }
  }
  return found;
}

const deref = (value: Json): Json => (typeof value?.$ref === 'string' ? (resolve(value.$ref) as Json) : value);

/** A validator of a message's payload schema, its component refs resolved in the document. */
function payloadValidator(payload: Json) {
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
  return ajv.compile({ ...payload, components: { schemas: doc.components.schemas } });
}

t.test('serves an AsyncAPI 3.0.0 document to anyone, as JSON', async (t) => {
  t.equal(served.status, 200);
  t.match(served.headers.get('content-type'), /^application\/json/);
  t.equal(doc.asyncapi, '3.0.0');
  t.match(doc.info, { title: String, version: String, description: /asyncapi|subjects/i });
  t.match(doc.servers?.nats, { host: String, protocol: 'nats' });
  const again = await svc.request('GET', '/asyncapi.json');
  t.equal(again.text, served.text, 'built once: every request gets the same document');
});

t.test('is valid against the AsyncAPI 3.0.0 JSON Schema', async (t) => {
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
  const validate = ajv.compile(specs.schemasWithoutId['3.0.0']!);
  t.ok(validate(doc), 'valid', { errors: validate.errors?.slice(0, 10) });
});

t.test('has the structure a validator checks: channels with addresses, operations on them, messages with payloads', async (t) => {
  const wrong: string[] = [];
  t.ok(Object.keys(doc.channels).length > 50);
  for (const [id, channel] of Object.entries<Json>(doc.channels)) {
    if (!('address' in channel)) wrong.push(`${id} has no address (null: the request's inbox)`);
    const named = [...String(channel.address ?? '').matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
    if (named.sort().join() !== Object.keys(channel.parameters ?? {}).sort().join()) wrong.push(`${id}: its address and its parameters differ`);
    for (const [name, message] of Object.entries<Json>(channel.messages)) if (!deref(message)?.payload) wrong.push(`${id}: message ${name} has no payload`);
  }
  for (const [id, operation] of Object.entries<Json>(doc.operations)) {
    if (!['send', 'receive'].includes(operation.action)) wrong.push(`${id} neither sends nor receives`);
    const channel = operation.channel?.$ref as string;
    if (!/^#\/channels\/./.test(channel)) wrong.push(`${id} refers to no channel`);
    for (const m of operation.messages) if (!(m.$ref as string).startsWith(`${channel}/messages/`)) wrong.push(`${id}: ${m.$ref} is not its channel's`);
    for (const m of operation.reply?.messages ?? []) if (!(m.$ref as string).startsWith(`${operation.reply.channel.$ref}/messages/`)) wrong.push(`${id}: ${m.$ref} is not its reply channel's`);
  }
  t.same(wrong, [], 'every channel, message and operation is well formed');
});

t.test('every $ref resolves inside the document', async (t) => {
  const refs = refsIn(doc);
  t.ok(refs.length > 100);
  const broken = [...new Set(refs)].filter((ref) => resolve(ref) === undefined);
  t.same(broken, [], 'no dangling $ref');
  const used = new Set(refs.filter((r) => r.startsWith('#/components/schemas/')).map((r) => r.split('/')[3]));
  t.same(Object.keys(doc.components.schemas).filter((name) => !used.has(name)), [], 'every component schema is used');
});

t.test('payload schemas are valid JSON Schema (draft 07), each named schema one component', async (t) => {
  const ajv = new Ajv({ strict: false, validateFormats: false });
  const invalid = Object.entries<Json>(doc.components.schemas).filter(([, schema]) => !ajv.validateSchema(schema));
  t.same(invalid.map(([name]) => name), [], 'every component is a JSON Schema');
  const payloads = Object.fromEntries(Object.entries<Json>(doc.components.messages).map(([name, message]) => [name, message.payload]));
  t.ok(Object.keys(payloads).length > 100);
  t.doesNotThrow(() => payloadValidator({ properties: payloads }), 'every payload schema compiles, its refs resolved');
  t.notOk(/Not representable in JSON Schema/.test(served.text), 'every payload is described (no unrepresentable zod type)');
  t.ok(doc.components.schemas.CheckoutProcess && doc.components.schemas.Product, 'named schemas are components');
  const uses = (name: string) => refsIn(doc.components.messages).filter((r) => r === `#/components/schemas/${name}`).length;
  t.ok(uses('CheckoutProcess') >= 3, 'a shape several messages carry is one component they refer to');
});

t.test('lists every endpoint of every subjects module, with its subject, queue group, request, reply and error reply', async (t) => {
  const endpoints = modules.flatMap((m) => m.endpoints);
  t.ok(modules.filter((m) => m.endpoints.length).length >= 15 && endpoints.length > 60, `${endpoints.length} endpoints in ${modules.length} modules`);
  const wrong: string[] = [];
  for (const e of endpoints) {
    const channel = doc.channels[e.subject] as Json | undefined;
    if (channel?.address !== e.subject) wrong.push(`${e.subject} has no channel`);
    const operation = doc.operations[e.subject] as Json | undefined;
    if (operation?.action !== 'send' || operation.bindings?.nats?.queue !== e.queue) wrong.push(`${e.subject}: not a request to queue group ${e.queue}`);
    const request = deref(channel?.messages?.request ?? {});
    if (request?.contentType !== (e.codec.contentType ?? 'application/json')) wrong.push(`${e.subject}: content type ${request?.contentType}`);
    if (e.codec !== JsonCodec && !/Framed as the codec says, not as JSON: (?!\(undocumented)/.test(request?.description ?? '')) wrong.push(`${e.subject}: its framing is not described`);
    const replies = (doc.channels[`${e.subject}.reply`] as Json | undefined)?.messages ?? {};
    if (!deref(replies.reply ?? {})?.payload) wrong.push(`${e.subject}: no reply`);
    if (JSON.stringify(deref(replies.error ?? {})?.headers?.required) !== JSON.stringify([ErrorHeaders.code, ErrorHeaders.message])) wrong.push(`${e.subject}: no error reply`);
  }
  t.same(wrong, [], 'each endpoint: its channel, operation, request, reply and error reply');
  const imports = deref(doc.channels['svc.imports.products'].messages.request);
  t.equal(imports.contentType, 'application/x-ndjson', 'import chunks are ndjson-framed');
  t.match(imports.description, /header line/);
});

t.test('lists every event domain with its subject, event names and payload', async (t) => {
  for (const domain of EventDomains) {
    const channel = doc.channels[`events.${domain}`] as Json;
    t.equal(channel?.address, `events.{project}.${domain}.{id}.{event}`, `${domain}: its subjects`);
    t.ok(channel.parameters.event.enum.length > 0, `${domain}: its event names`);
    t.same([...channel.parameters.event.enum].sort(), [...EventTypes[domain]].sort(), `${domain}: the event names of its module`);
    t.match(doc.operations[`events.${domain}`], { action: 'receive' });
    t.ok(deref(channel.messages.event).payload, `${domain}: its payload`);
    t.ok(namesAField(channel.parameters.id.description, deref(channel.messages.event).payload), `${domain}: {id} is a field of its payload`);
  }
});

/** The payload field a parameter's description names (`The payload's \`x\``) is a property of the payload (of each of its variants). */
function namesAField(description: string, payload: Json): boolean {
  const field = /The payload's `(\w+)`/.exec(description)?.[1];
  const schema = deref(payload);
  const variants: Json[] = schema.anyOf ?? schema.oneOf ?? [schema];
  return !!field && variants.every((v) => field in (deref(v).properties ?? {}));
}

t.test('lists every job kind as internal', async (t) => {
  for (const kind of JobKinds) {
    const channel = doc.channels[`jobs.${kind}`] as Json;
    const stepped = Boolean(channel?.parameters?.step);
    t.equal(channel?.address, stepped ? `jobs.${kind}.{project}.{id}.{step}` : `jobs.${kind}.{project}.{id}`, `${kind}: its subjects`);
    t.match(channel.description, /Internal/);
    t.ok(deref(channel.messages.job).payload, `${kind}: its payload`);
    t.ok(namesAField(channel.parameters.id.description, deref(channel.messages.job).payload), `${kind}: {id} is a field of its payload`);
    if (stepped) {
      t.ok(channel.parameters.step.enum.length > 0, `${kind}: its steps`);
      t.ok(namesAField(channel.parameters.step.description, deref(channel.messages.job).payload), `${kind}: {step} is a field of its payload`);
    }
    t.match(doc.operations[`jobs.${kind}`].tags, [{ name: 'jobs' }, { name: 'internal' }]);
  }
});

t.test('docs/integrators.md shows the integrator example as scripts/follow-events.ts has it', async (t) => {
  const script = await readFile(path.join(root, 'scripts', 'follow-events.ts'), 'utf8');
  const example = /\/\/ --- the example[^\n]*\n([\s\S]*?)\/\/ --- end of the example/.exec(script)?.[1];
  t.ok(example, 'the script marks its example');
  const page = await readFile(path.join(root, 'docs', 'integrators.md'), 'utf8');
  const start = page.indexOf("## Following events with an integration's credential");
  t.ok(start >= 0, 'the page has the section');
  const section = page.slice(start);
  t.ok(section.includes(`\`\`\`ts\n${example}\`\`\``), 'the page shows the example unchanged');
  t.match(section, /\/asyncapi\.json/);
  const go = await readFile(path.join(root, 'docs', 'examples', 'go-follow-events', 'main.go'), 'utf8');
  t.ok(section.includes(`\`\`\`go\n${go}\`\`\``), 'and the Go example as docs/examples/go-follow-events/main.go has it (test/integrator-go.test.ts runs it)');
});

interface Printed {
  seq: number;
  subject: string;
  msgId: string;
  redelivered: boolean;
  event: Json;
}

/** The built script as an integrator runs it, with the integration's credential, and the events it printed so far. */
async function follow(t: Test, credsFile: string): Promise<{ run: ServiceProcess; printed(): Printed[] }> {
  const run = runBuilt(t, 'scripts/follow-events.js', { NATS_URL: svc.natsUrl }, ['--creds', credsFile]);
  await until(() => run.output().includes('following '), 15_000, () => `the script did not start: ${run.output()}`);
  const printed = () =>
    run
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Printed);
  return { run, printed };
}

async function until(done: () => boolean, timeoutMs: number, message: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(message());
    await sleep(25);
  }
}

t.test("the integrators' durable consumer follows a process's PoS events, acks them and resumes after a restart without repeats", async (t) => {
  const fx = await seedCheckout(svc);
  const newProcess = async () => {
    const res = await fx.createProcess();
    t.equal(res.status, 201);
    return res.body.id as string;
  };
  const pos = async (id: string, state: string) => t.equal((await patchPos(svc, fx.tokens.pricing, id, { state })).status, 200, `PoS ${state}`);
  const posMessage = deref(doc.channels['events.pos'].messages.event);
  const matchesDocument = payloadValidator(posMessage.payload);

  // The project's owner makes the integration: the PoS events of the project.
  const made = await svc.request('POST', `/${TestProject}/integrations`, { token: await svc.token(['projectsWrite']), body: { name: 'PoS desk', kind: 'nats', filter: 'pos.>' } });
  t.equal(made.status, 201, made.text);
  const credsFile = path.join(svc.config.dataDir, 'pos-desk.creds');
  await writeFile(credsFile, made.body.creds, { mode: 0o600 });

  const first = await follow(t, credsFile);
  const a = await newProcess();
  await pos(a, 'processing');
  await pos(a, 'successful');
  await until(() => first.printed().length >= 3, 15_000, () => `3 events expected: ${first.run.output()}`);
  const seen = first.printed();
  t.same(
    seen.map((p) => p.subject),
    ['pending', 'processing', 'successful'].map((event) => `events.${TestProject}.pos.${subjectToken(a)}.${event}`),
    'each PoS event of the process once, in order',
  );
  for (const p of seen) {
    t.equal(p.redelivered, false);
    t.ok(EventPayloads.pos.safeParse(p.event).success, `${p.event.event}: the payload of subjects/events.ts`);
    t.ok(matchesDocument(p.event), `${p.event.event}: the payload /asyncapi.json describes`, { errors: matchesDocument.errors });
  }
  t.equal(new Set(seen.map((p) => p.msgId)).size, 3, 'each with its own Nats-Msg-Id');

  first.run.child.kill('SIGTERM');
  t.equal(await first.run.exited, 0, 'Ctrl-C / SIGTERM stops it cleanly');

  // While nobody follows: a second process and a move of it.
  const b = await newProcess();
  await pos(b, 'processing');

  const second = await follow(t, credsFile);
  await until(() => second.printed().length >= 2, 15_000, () => `2 events expected after the restart: ${second.run.output()}`);
  await sleep(300);
  t.same(
    second.printed().map((p) => p.subject),
    ['pending', 'processing'].map((event) => `events.${TestProject}.pos.${subjectToken(b)}.${event}`),
    'after the restart: what happened meanwhile, nothing it had acknowledged',
  );
  const jsm = await jetstreamManager(svc.nc);
  const info = await jsm.consumers.info(EventStream.name, made.body.nats.consumer);
  t.equal(info.num_pending, 0, 'nothing left to deliver');
  t.equal(info.num_ack_pending, 0, 'every event acknowledged');
  second.run.child.kill('SIGTERM');
  t.equal(await second.run.exited, 0);
});
