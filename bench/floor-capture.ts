import { readFile, stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import { connectNats } from '../src/infra/nats.js';
import { createLogger } from '../src/logger.js';
import type { Bench } from './harness.js';

/**
 * What one operation of the service does below its HTTP request, read off the real service: the
 * statements its pools send (SQL_TRACE_FILE, src/infra/postgres.ts) and every message that crosses
 * its nats-server (a tap subscribed to `>` as the admin user). The floor benchmark builds the raw
 * parts an operation is made of from these, with the same statements and the same payload sizes.
 */
export interface TracedStatement {
  pool: string;
  statement: string;
  parameters: unknown[];
}

export interface TappedMessage {
  subject: string;
  reply?: string;
  /** Payload bytes. */
  size: number;
  /** Header bytes (0 without headers). */
  headerSize: number;
}

export interface Capture {
  statements: TracedStatement[];
  messages: TappedMessage[];
}

export interface Tap {
  /** What the service did while `operation` ran and until `settled` resolved (the background work it caused). */
  capture(operation: () => Promise<void>, settled?: () => Promise<void>): Promise<Capture>;
  close(): Promise<void>;
}

/** How long the tap waits after an operation settled for the last messages and statements to arrive. */
const QuietMs = 300;

export async function startTap(bench: Bench, traceFile: string): Promise<Tap> {
  const nc: NatsConnection = await connectNats({ url: bench.nats.url, creds: bench.nats.adminCreds, name: 'floor-tap', log: createLogger({ level: 'silent' }) });
  let recording: TappedMessage[] | undefined;
  const sub: Subscription = nc.subscribe('>', {
    callback: (_err, msg: Msg) => {
      if (!recording || msg.subject.startsWith('$SYS.')) return;
      recording.push({ subject: msg.subject, reply: msg.reply || undefined, size: msg.data.length, headerSize: msg.headers ? msg.headers.toString().length : 0 });
    },
  });
  await nc.flush();
  return {
    async capture(operation, settled) {
      const from = await stat(traceFile).then((s) => s.size, () => 0);
      const messages: TappedMessage[] = [];
      recording = messages;
      await operation();
      await settled?.();
      await sleep(QuietMs);
      await nc.flush();
      recording = undefined;
      const text = (await readFile(traceFile).catch(() => Buffer.alloc(0))).subarray(from).toString();
      const statements = text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as TracedStatement);
      return { statements, messages };
    },
    async close() {
      sub.unsubscribe();
      await nc.close();
    },
  };
}

/** The kind of a message, for the floor's parts and for a person reading the capture. */
export type MessageKind = 'service request' | 'service reply' | 'stream publish' | 'stream ack' | 'job delivery' | 'job ack' | 'pull request' | 'jetstream api' | 'other';

export function messageKind(message: TappedMessage, requestReplies: ReadonlySet<string>): MessageKind {
  const { subject } = message;
  if (subject.startsWith('svc.')) return 'service request';
  if (requestReplies.has(subject)) return 'service reply';
  if (subject.startsWith('events.') || subject.startsWith('jobs.')) return 'stream publish';
  if (subject.startsWith('$JS.ACK.')) return 'job ack';
  if (subject.startsWith('$JS.API.CONSUMER.MSG.NEXT.')) return 'pull request';
  if (subject.startsWith('$JS.API.')) return 'jetstream api';
  return 'other';
}
