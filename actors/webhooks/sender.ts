import net from 'node:net';
import { performance } from 'node:perf_hooks';
import tls from 'node:tls';
import { checkedLookup, urlProblem, type DestinationPolicy } from '../../src/infra/destinations.js';
import { readAnswer, type AnswerReader } from './answer.js';

/**
 * One POST of a webhook delivery: no redirect followed (a 3xx is an answer that is not 2xx), at
 * most the first few KB of the answer read, one timeout for the whole call, and a connection only
 * to an address the destination policy allows, checked when it connects (src/infra/destinations.ts).
 *
 * HTTP/1.1 over kept-alive connections, written and read here rather than by node:http: a delivery
 * needs the status and the answer's first bytes, nothing of what node:http builds around them (its
 * request and answer objects, header maps, streams). A POST cost the worker 54 µs of CPU with
 * node:http and 17 µs like this (a local receiver, 16 connections, 2026-11-27), and a sale makes
 * seven deliveries per webhook.
 */
export interface SendResult {
  /** The HTTP status, or `timeout`, or `connection_failed`. */
  status: string;
  delivered: boolean;
  durationMs: number;
  /** The first bytes of the answer, or what went wrong. */
  response: string;
}

/** What is kept of an answer. */
export const KeptResponseBytes = 500;
/** What is read of an answer's body at most: the rest is not waited for (and the connection not kept). */
export const ReadBytes = 4096;
/** Connections to one origin at most; more deliveries to it wait for one. */
const ConnectionsPerOrigin = 16;
/**
 * How long an idle connection is kept: under the 5 s after which common servers (Node's among
 * them) close theirs, so that a request rarely meets a connection the receiver is closing. A
 * receiver's `Keep-Alive: timeout=N` shortens it.
 */
const IdleMs = 4000;

export function createSender(policy: DestinationPolicy) {
  const lookup = checkedLookup(policy);
  const origins = new Map<string, Origin>();

  /** Each URL's request target, parsed and checked once (the policy is the sender's for its life). */
  const targets = new Map<string, Target | { refused: string }>();
  const targetOf = (url: string) => {
    let target = targets.get(url);
    if (!target) {
      const parsed = new URL(url);
      const refused = urlProblem(parsed, policy);
      if (refused) target = { refused };
      else {
        const hostname = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
        const tlsOn = parsed.protocol === 'https:';
        const port = Number(parsed.port || (tlsOn ? 443 : 80));
        const key = `${parsed.protocol}//${parsed.host}`;
        let origin = origins.get(key);
        if (!origin) origins.set(key, (origin = new Origin({ hostname, port, tls: tlsOn, lookup })));
        target = { origin, head: `POST ${parsed.pathname}${parsed.search} HTTP/1.1\r\nhost: ${parsed.host}\r\n` };
      }
      if (targets.size >= 10_000) {
        targets.clear();
        for (const [key, origin] of origins) if (origin.unused) origins.delete(key);
      }
      targets.set(url, target);
    }
    return target;
  };

  return {
    async send(url: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<SendResult> {
      const started = performance.now();
      const result = (status: string, response: string): SendResult => ({
        status,
        delivered: /^2\d\d$/.test(status),
        durationMs: Math.round(performance.now() - started),
        response: Buffer.from(response).subarray(0, KeptResponseBytes).toString('utf8'),
      });
      const target = targetOf(url);
      if ('refused' in target) return result('connection_failed', `refused destination: ${target.refused}`);
      let head = `${target.head}content-length: ${Buffer.byteLength(body)}\r\n`;
      for (const name in headers) head += `${name}: ${headers[name]}\r\n`;
      const request = `${head}\r\n${body}`;
      const deadline = started + timeoutMs;
      const answer = await target.origin.exchange(request, deadline);
      if (answer.kind === 'answer') return result(String(answer.status), answer.body.toString('utf8'));
      return answer.kind === 'timeout' ? result('timeout', `no answer within ${timeoutMs} ms`) : result('connection_failed', answer.reason);
    },
    close() {
      for (const origin of origins.values()) origin.close();
      origins.clear();
      targets.clear();
    },
  };
}

interface Target {
  origin: Origin;
  /** The request line and Host header. */
  head: string;
}

/**
 * How a request went: answered (and whether the connection can carry the next), not answered in
 * time, or failed (`unanswered`: the connection ended before a byte of an answer came).
 */
type Exchange = { kind: 'answer'; status: number; body: Buffer; reusable: boolean } | { kind: 'timeout' } | { kind: 'failed'; reason: string; unanswered?: boolean };

interface OriginAddress {
  hostname: string;
  port: number;
  tls: boolean;
  lookup: net.LookupFunction;
}

/** A receiver's connections: kept alive, at most ConnectionsPerOrigin, the last one used first. */
class Origin {
  private readonly idle: Connection[] = [];
  private open = 0;
  private readonly waiting: Array<(connection: Connection | undefined) => void> = [];
  private closed = false;

  constructor(private readonly address: OriginAddress) {}

  /**
   * Sends a request on a kept connection (or a new one) and reads its answer. A kept connection
   * that ends before a byte of the answer came was most likely closed by the receiver as the
   * request went out (its idle timeout): the request goes once more, on a new connection. A
   * receiver that did take it gets it twice with the same webhook-id, as at-least-once allows.
   */
  async exchange(request: string, deadline: number): Promise<Exchange> {
    const first = await this.once(request, deadline, false);
    const closedUnderIt = first.kind === 'failed' && first.unanswered && first.kept;
    return closedUnderIt && performance.now() < deadline ? this.once(request, deadline, true) : first;
  }

  /** One try of a request (`fresh`: not on a kept connection); `kept`: it went on one. */
  private async once(request: string, deadline: number, fresh: boolean): Promise<Exchange & { kept?: boolean }> {
    const connection = await this.take(deadline, fresh);
    if (!connection) return { kind: 'timeout' };
    const kept = connection.exchanges > 0;
    const outcome = await connection.exchange(request, deadline);
    if (outcome.kind === 'answer' && outcome.reusable) this.release(connection);
    else this.discard(connection);
    return { ...outcome, kept };
  }

  /** Whether it holds no connection and nobody waits for one (its entry can go). */
  get unused(): boolean {
    return this.open === 0 && this.waiting.length === 0;
  }

  close(): void {
    this.closed = true;
    for (const connection of this.idle.splice(0)) connection.destroy();
    for (const wake of this.waiting.splice(0)) wake(undefined);
  }

  /** A kept connection, the last one used first, or a new one (`fresh`: a new one or the next one freed). */
  private take(deadline: number, fresh = false): Promise<Connection | undefined> {
    const kept = fresh ? undefined : this.idle.pop();
    if (kept) return Promise.resolve(kept.wake());
    if (this.open < ConnectionsPerOrigin || this.closed) return Promise.resolve(this.connect());
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        const at = this.waiting.indexOf(handOver);
        if (at >= 0) this.waiting.splice(at, 1);
        resolve(undefined);
      }, Math.max(0, deadline - performance.now()));
      const handOver = (connection: Connection | undefined) => {
        clearTimeout(timer);
        resolve(connection);
      };
      this.waiting.push(handOver);
    });
  }

  private connect(): Connection {
    this.open++;
    const connection: Connection = new Connection(this.address, () => this.forget(connection));
    return connection;
  }

  private release(connection: Connection): void {
    const next = this.waiting.shift();
    if (next) return next(connection);
    if (this.closed) return connection.destroy();
    connection.rest();
    this.idle.push(connection);
  }

  private discard(connection: Connection): void {
    connection.destroy();
    const next = this.waiting.shift();
    if (next) next(this.connect());
  }

  /** A connection ended (closed by either side, or broken). */
  private forget(connection: Connection): void {
    this.open--;
    const at = this.idle.indexOf(connection);
    if (at >= 0) this.idle.splice(at, 1);
  }
}

/** One connection to a receiver: a request at a time, its answer read by an AnswerReader. */
class Connection {
  private readonly socket: net.Socket;
  private idleMs = IdleMs;
  private idleTimer: NodeJS.Timeout | undefined;
  private current: { reader: AnswerReader; answered: boolean; settle(outcome: Exchange): void } | undefined;
  private ended = false;
  /** The requests sent on it so far. */
  exchanges = 0;

  constructor(
    address: OriginAddress,
    private readonly onEnd: () => void,
  ) {
    const options = { host: address.hostname, port: address.port, lookup: address.lookup };
    this.socket = address.tls
      ? tls.connect({ ...options, ...(net.isIP(address.hostname) ? {} : { servername: address.hostname }), ALPNProtocols: ['http/1.1'] })
      : net.connect(options);
    this.socket.setNoDelay(true);
    this.socket.on('data', (chunk: Buffer) => this.read(chunk));
    this.socket.on('error', (err: Error) => this.end(err.message));
    this.socket.on('close', () => this.end('the receiver closed the connection'));
  }

  exchange(request: string, deadline: number): Promise<Exchange> {
    if (this.ended) return Promise.resolve({ kind: 'failed', reason: 'the receiver closed the connection', unanswered: true });
    this.exchanges++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => settle({ kind: 'timeout' }), Math.max(0, deadline - performance.now()));
      const settle = (outcome: Exchange) => {
        if (this.current !== current) return;
        this.current = undefined;
        clearTimeout(timer);
        resolve(outcome);
      };
      const current = { reader: readAnswer(ReadBytes), answered: false, settle };
      this.current = current;
      this.socket.write(request);
    });
  }

  /** Idle: closed after a while, and not keeping the process alive. */
  rest(): void {
    this.socket.unref();
    this.idleTimer = setTimeout(() => this.destroy(), this.idleMs);
    this.idleTimer.unref();
  }

  wake(): this {
    clearTimeout(this.idleTimer);
    this.socket.ref();
    return this;
  }

  destroy(): void {
    clearTimeout(this.idleTimer);
    this.socket.destroy();
  }

  private read(chunk: Buffer): void {
    const current = this.current;
    // Bytes nobody asked for: the connection is not to be trusted with another request.
    if (!current) return this.destroy();
    current.answered = true;
    const answer = current.reader.push(chunk);
    if (answer) {
      if (answer.keepAliveMs !== undefined) this.idleMs = Math.min(IdleMs, answer.keepAliveMs - 1000);
      current.settle({ kind: 'answer', status: answer.status, body: answer.body, reusable: answer.reusable && this.idleMs > 0 });
    } else if (current.reader.failed) {
      current.settle({ kind: 'failed', reason: `an answer that cannot be read: ${current.reader.failed}` });
    }
  }

  private end(reason: string): void {
    const current = this.current;
    if (current) {
      // An answer whose body ends with the connection (or was cut short) is the answer its status says.
      const answer = current.reader.end();
      current.settle(answer ? { kind: 'answer', status: answer.status, body: answer.body, reusable: false } : { kind: 'failed', reason, unanswered: !current.answered });
    }
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.idleTimer);
    this.onEnd();
  }
}
