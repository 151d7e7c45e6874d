import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node';
import postgres from 'postgres';
import { ensureStream } from '../src/infra/jetstream.js';
import { connectNats } from '../src/infra/nats.js';
import { createLogger } from '../src/logger.js';

/**
 * One raw part of the floor benchmark (scenarios/floor.ts), in a process of its own so that its
 * CPU is read apart from the load generator's: node dist/bench/floor-part.js <spec-json-file>.
 * It connects, prints `ready`, waits for `go` on stdin, repeats its operation from `concurrency`
 * loops for `seconds`, prints `done <operations>`, and exits on `exit`.
 *
 * - `nats`: request/reply round trips of the given sizes between two plain NATS clients (a
 *   requester and a responder, each its own connection) through the bench's nats-server.
 * - `jetstream`: publishes of the given sizes with a Nats-Msg-Id, each awaiting its ack, into a
 *   stream set up as the platform's (file storage, a duplicate window), on subjects new for each
 *   operation (as a checkout process's events are); then, when `consume` is set, those messages
 *   pulled by a durable consumer and acknowledged one by one.
 * - `postgres`: statements as the service ran them (traced), with their parameters, on pools of
 *   the service's sizes and settings; the operation's own ids made fresh each time, so that
 *   inserts insert and version-compared updates update.
 * - `sign`: the local signer's signatures (ECDSA P-256 over SHA-256 in libuv's pool).
 */
export type PartSpec =
  | { kind: 'nats'; url: string; creds?: string; caFile?: string; roundTrips: Array<{ request: number; reply: number }> }
  | { kind: 'jetstream'; url: string; creds?: string; caFile?: string; publishes: Array<{ size: number }>; consume: number }
  | { kind: 'postgres'; url: string; pools: Record<string, { max: number; settings?: Record<string, string> }>; statements: Array<{ pool: string; statement: string; parameters: unknown[] }>; freshIds: string[] }
  | { kind: 'sign'; signatures: number; messageBytes: number };

export interface PartRun {
  concurrency: number;
  seconds: number;
}

const [specFile] = process.argv.slice(2);
if (!specFile) throw new Error('usage: floor-part <spec-json-file>');
const { spec, run } = JSON.parse(readFileSync(specFile, 'utf8')) as { spec: PartSpec; run: PartRun };
const log = createLogger({ level: 'silent' });

const { operation, close } = await prepare(spec);
const lines = createInterface({ input: process.stdin });
process.stdout.write('ready\n');
for await (const line of lines) {
  if (line === 'go') {
    let operations = 0;
    const until = performance.now() + run.seconds * 1000;
    await Promise.all(
      Array.from({ length: run.concurrency }, async () => {
        while (performance.now() < until) {
          await operation();
          operations++;
        }
      }),
    );
    process.stdout.write(`done ${operations}\n`);
  } else if (line === 'exit') {
    await close();
    process.exit(0);
  }
}

async function prepare(spec: PartSpec): Promise<{ operation: () => Promise<void>; close: () => Promise<void> }> {
  switch (spec.kind) {
    case 'nats':
      return natsRoundTrips(spec);
    case 'jetstream':
      return jetstreamPublishes(spec);
    case 'postgres':
      return statements(spec);
    case 'sign':
      return signatures(spec);
  }
}

async function connectAs(spec: { url: string; creds?: string; caFile?: string }, name: string): Promise<NatsConnection> {
  return connectNats({ url: spec.url, creds: spec.creds, name, log, ...(spec.caFile ? { tls: { caFile: spec.caFile } } : {}) });
}

async function natsRoundTrips(spec: Extract<PartSpec, { kind: 'nats' }>) {
  const [requester, responder] = [await connectAs(spec, 'floor-requester'), await connectAs(spec, 'floor-responder')];
  // The reply's size rides on the request's subject: svc.floor.<index of the round trip>.
  const replies = spec.roundTrips.map((r) => new Uint8Array(r.reply).fill(0x61));
  responder.subscribe('svc.floor.*', { queue: 'floor', callback: (_err, msg) => void msg.respond(replies[Number(msg.subject.slice('svc.floor.'.length))]) });
  await responder.flush();
  const requests = spec.roundTrips.map((r) => new Uint8Array(r.request).fill(0x62));
  return {
    operation: async () => {
      for (const [index, request] of requests.entries()) await requester.request(`svc.floor.${index}`, request, { timeout: 10_000 });
    },
    close: async () => {
      await requester.close();
      await responder.close();
    },
  };
}

async function jetstreamPublishes(spec: Extract<PartSpec, { kind: 'jetstream' }>) {
  const nc = await connectAs(spec, 'floor-jetstream');
  const stream = 'FLOOR';
  await ensureStream(nc, { name: stream, subjects: ['floor.>'], maxAgeMs: 3_600_000, duplicateWindowMs: 120_000 });
  const jsm = await jetstreamManager(nc);
  await jsm.streams.purge(stream);
  const js = jetstream(nc);
  const payloads = spec.publishes.map((p) => new Uint8Array(p.size).fill(0x63));
  let messages: AsyncIterable<{ ack(): void }> | undefined;
  if (spec.consume) {
    await jsm.consumers.add(stream, { durable_name: 'floor', ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.All, filter_subject: 'floor.job.>' });
    messages = await (await js.consumers.get(stream, 'floor')).consume({ max_messages: 16 });
  }
  // Acks of the consumed jobs, counted so that an operation ends when its jobs were taken and acked.
  let acked = 0;
  const waiting: Array<{ until: number; resolve: () => void }> = [];
  if (messages) {
    void (async () => {
      for await (const message of messages) {
        message.ack();
        acked++;
        while (waiting.length && waiting[0]!.until <= acked) waiting.shift()!.resolve();
      }
    })();
  }
  let published = 0;
  return {
    operation: async () => {
      // The events go out together, each with its id (the relay's publish), the jobs last; on
      // subjects of their own, as a process's events are (events.<project>.checkout.<id>.<event>):
      // the stream keeps a state per subject.
      const process = randomUUID();
      await Promise.all(
        payloads.map((payload, index) => {
          const job = index >= payloads.length - spec.consume;
          const h = natsHeaders();
          h.set('Nats-Msg-Id', randomUUID());
          return js.publish(job ? `floor.job.${process}.${index}` : `floor.event.${process}.${index}`, payload, { headers: h });
        }),
      );
      if (spec.consume) {
        published += spec.consume;
        const target = published;
        if (acked < target) await new Promise<void>((resolve) => waiting.push({ until: target, resolve }));
      }
    },
    close: async () => {
      await jsm.streams.delete(stream).catch(() => {});
      await nc.close();
    },
  };
}

async function statements(spec: Extract<PartSpec, { kind: 'postgres' }>) {
  const pools = Object.fromEntries(
    Object.entries(spec.pools).map(([name, pool]) => [name, postgres(spec.url, { max: pool.max, onnotice: () => {}, connection: { application_name: 'floor', ...pool.settings } })]),
  );
  // The ids the operation made (a checkout process's) are made fresh in each run: every string
  // parameter that holds one is cut at them once here, and joined with the new ones per run.
  const idPattern = spec.freshIds.length ? new RegExp(spec.freshIds.map((id) => id.replace(/[^\w-]/g, '\\$&')).join('|'), 'g') : undefined;
  type Template = (fresh: ReadonlyMap<string, string>) => unknown;
  const template = (value: unknown): Template => {
    if (idPattern && typeof value === 'string' && value.match(idPattern)) {
      const pieces = value.split(idPattern);
      const ids = value.match(idPattern)!;
      return (fresh) => pieces.reduce((text, piece, i) => text + piece + (i < ids.length ? fresh.get(ids[i]!)! : ''), '');
    }
    if (Array.isArray(value)) {
      const items = value.map(template);
      return (fresh) => items.map((item) => item(fresh));
    }
    return () => value;
  };
  const prepared = spec.statements.map(({ pool, statement, parameters }) => ({ sql: pools[pool]!, statement, parameters: parameters.map(template) }));
  return {
    operation: async () => {
      const fresh = new Map(spec.freshIds.map((id) => [id, randomUUID()]));
      for (const { sql, statement, parameters } of prepared) {
        await sql.unsafe(statement, parameters.map((parameter) => parameter(fresh)) as postgres.ParameterOrJSON<never>[], { prepare: true });
      }
    },
    close: async () => {
      await Promise.all(Object.values(pools).map((pool) => pool.end()));
    },
  };
}

async function signatures(spec: Extract<PartSpec, { kind: 'sign' }>) {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const message = Buffer.alloc(spec.messageBytes, 0x64);
  const signInPool = promisify(sign);
  return {
    operation: async () => {
      await Promise.all(Array.from({ length: spec.signatures }, () => signInPool('sha256', message, { key: privateKey, dsaEncoding: 'ieee-p1363' })));
    },
    close: async () => {},
  };
}
