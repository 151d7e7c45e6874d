import { createSocket } from 'node:dgram';
import { isIP } from 'node:net';
import type { Test } from 'tap';

/**
 * A name server on a loopback UDP port that answers A and AAAA queries from a table (name → its
 * addresses), and does not answer at all for a name marked `silent` (as a name server that is down
 * or drops the query): what a test points a resolver at (WEBHOOK_DNS_SERVERS) to see what the
 * platform does with a name an attacker controls. Names not in the table: an answer with no address.
 */
export interface DnsStandIn {
  /** `127.0.0.1:<port>`, as WEBHOOK_DNS_SERVERS takes it. */
  server: string;
  /** Queries received, by name. */
  asked(name: string): number;
}

export async function startDnsStandIn(t: Pick<Test, 'teardown'>, names: Record<string, readonly string[] | 'silent'>): Promise<DnsStandIn> {
  const socket = createSocket('udp4');
  const asked = new Map<string, number>();
  socket.on('message', (query, peer) => {
    const question = readQuestion(query);
    if (!question) return;
    asked.set(question.name, (asked.get(question.name) ?? 0) + 1);
    const entry = names[question.name];
    if (entry === 'silent') return;
    const family = question.type === 28 ? 6 : question.type === 1 ? 4 : 0;
    const addresses = (entry ?? []).filter((a) => isIP(a) === family);
    const head = Buffer.alloc(12);
    query.copy(head, 0, 0, 2); // the query's id
    head.writeUInt16BE(0x8180, 2); // a response, recursion desired and available, no error
    head.writeUInt16BE(1, 4);
    head.writeUInt16BE(addresses.length, 6);
    const answers = addresses.map((address) => {
      const data = family === 4 ? Buffer.from(address.split('.').map(Number)) : ipv6Bytes(address);
      const record = Buffer.alloc(12);
      record.writeUInt16BE(0xc00c, 0); // the name: the question's
      record.writeUInt16BE(question.type, 2);
      record.writeUInt16BE(1, 4);
      record.writeUInt32BE(60, 6);
      record.writeUInt16BE(data.length, 10);
      return Buffer.concat([record, data]);
    });
    socket.send(Buffer.concat([head, query.subarray(12, question.end), ...answers]), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => socket.close(() => resolve())));
  return { server: `127.0.0.1:${socket.address().port}`, asked: (name) => asked.get(name) ?? 0 };
}

function readQuestion(query: Buffer): { name: string; type: number; end: number } | undefined {
  const labels: string[] = [];
  let at = 12;
  while (at < query.length && query[at] !== 0) {
    const length = query[at]!;
    labels.push(query.subarray(at + 1, at + 1 + length).toString('latin1'));
    at += 1 + length;
  }
  if (at + 5 > query.length) return undefined;
  return { name: labels.join('.').toLowerCase(), type: query.readUInt16BE(at + 1), end: at + 5 };
}

function ipv6Bytes(address: string): Buffer {
  const [head, tail] = address.split('::') as [string, string?];
  const words = (part: string | undefined) => (part ? part.split(':').map((w) => parseInt(w, 16)) : []);
  const before = words(head);
  const after = words(tail);
  const all = tail === undefined ? before : [...before, ...Array<number>(8 - before.length - after.length).fill(0), ...after];
  const bytes = Buffer.alloc(16);
  all.forEach((w, i) => bytes.writeUInt16BE(w, i * 2));
  return bytes;
}
