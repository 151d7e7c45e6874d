import t, { type Test } from 'tap';
import { AnswerUnfolder, SectionMax } from '../src/infra/obs-fold.js';

/**
 * The unfolding of folded header lines in the answers of one connection (src/infra/obs-fold.ts):
 * the bytes of several answers as they come, cut into reads at every place (the wire does not cut
 * where the answers do), against what undici must see. test/webhook-sender.test.ts sends the same
 * over sockets.
 */

/** A head or trailer section as undici must see it: each fold (CRLF and the SP/HTAB after it) as SP. */
const unfolded = (section: string) => section.replace(/\r\n[ \t]+/g, (fold) => ' '.repeat(fold.length));

/** What comes out when `bytes` come in reads cut at `cuts`. */
function through(bytes: Buffer, cuts: number[]): Buffer {
  const unfolder = new AnswerUnfolder();
  const out: Buffer[] = [];
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    out.push(unfolder.take(bytes.subarray(from, cut)));
    from = cut;
  }
  out.push(unfolder.end() ?? Buffer.alloc(0));
  return Buffer.concat(out);
}

/** Every cut into two reads, every cut into three (where `pairs`), and a byte a read. */
function checkEveryCut(t: Test, input: string, expected: string, pairs = true) {
  const bytes = Buffer.from(input, 'latin1');
  const want = Buffer.from(expected, 'latin1');
  let wrong: string | undefined;
  for (let i = 0; i <= bytes.length && !wrong; i++) {
    if (!through(bytes, [i]).equals(want)) wrong = `cut at ${i}`;
    for (let j = i + 1; pairs && j < bytes.length && !wrong; j++) if (!through(bytes, [i, j]).equals(want)) wrong = `cut at ${i} and ${j}`;
  }
  const each = Array.from({ length: bytes.length }, (_, i) => i);
  if (!wrong && !through(bytes, each).equals(want)) wrong = 'a byte a read';
  t.notOk(wrong, wrong ?? 'as expected wherever the reads are cut');
}

t.test('folds in heads and trailers become spaces; bodies, chunk data and the answers between pass untouched', async (t) => {
  const heads = [
    'HTTP/1.1 100 Continue\r\n\r\n',
    'HTTP/1.1 200 OK\r\nX-Note: first\r\n \t second\r\nContent-Length: 12\r\n\r\n',
    'body\r\n body!',
    'HTTP/1.1 204 No Content\r\nX-A: a\r\n\tb\r\n\r\n',
    'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-B: b\r\n c\r\n\r\n',
    '6\r\nab\r\n c\r\n3;ext=1\r\n\r\n \r\n0\r\n',
    'X-Trailer: t\r\n u\r\n\r\n',
    'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n',
    'HTTP/1.1 304 Not Modified\r\nContent-Length: 40\r\nX-C: c\r\n d\r\n\r\n',
    'HTTP/1.0 200 OK\r\nContent-Length: 0\r\nX-D: x\r\n y\r\n\r\n',
  ];
  // The parts that are heads or trailers (the others are bodies and chunks).
  const sections = new Set([0, 1, 3, 4, 6, 7, 8, 9]);
  const input = heads.join('');
  const expected = heads.map((part, i) => (sections.has(i) ? unfolded(part) : part)).join('');
  t.not(expected, input);
  checkEveryCut(t, input, expected);
});

t.test('an answer whose body runs to the connection\'s end: its head unfolded, nothing after it', async (t) => {
  const head = 'HTTP/1.1 200 OK\r\nX-C: c\r\n d\r\n\r\n';
  const rest = 'to the end\r\n not a head\r\nHTTP/1.1 200 OK\r\nX: y\r\n z\r\nContent-Length: 0\r\n\r\n';
  checkEveryCut(t, head + rest, unfolded(head) + rest);
});

t.test('what it does not frame as llhttp would passes as it came, from there to the connection\'s end', async (t) => {
  const folded = 'HTTP/1.1 200 OK\r\nX: a\r\n b\r\nContent-Length: 2\r\n\r\nok';
  const cases: Array<[string, string]> = [
    ['bare LF line ends', 'HTTP/1.1 200 OK\nX: a\n b\nContent-Length: 2\n\nok'],
    ['a bare CR', 'HTTP/1.1 200 OK\r\nX: a\rb\r\nContent-Length: 2\r\n\r\nok'],
    ['a space before the first field line (not a fold: nothing to continue)', 'HTTP/1.1 200 OK\r\n X: a\r\nContent-Length: 2\r\n\r\nok'],
    ['no status line', 'HTTP/1.1200 OK\r\nContent-Length: 2\r\n\r\nok'],
    ['an empty line first', '\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok'],
    ['Content-Length and Transfer-Encoding', 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n'],
    ['two Content-Length', 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok'],
    ['a Content-Length that is not a number', 'HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nok'],
    ['chunked not last', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n2\r\nok\r\n0\r\n\r\n'],
    ['a chunk size with a space', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2 \r\nok\r\n0\r\n\r\n'],
    ['a chunk not ended by CRLF', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokx\r\n0\r\n\r\n'],
    ['a protocol switch', 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n'],
    ['a 1xx it does not know', 'HTTP/1.1 150 Odd\r\n\r\n'],
  ];
  for (const [what, answer] of cases) {
    t.test(what, async (t) => checkEveryCut(t, answer + folded, answer + folded, false));
  }
  const long = `HTTP/1.1 200 OK\r\nX-Long: ${'a'.repeat(SectionMax)}\r\n b\r\nContent-Length: 2\r\n\r\nok`;
  const bytes = Buffer.from(long + folded, 'latin1');
  t.ok(through(bytes, [100, 20_000]).equals(bytes), `a head longer than ${SectionMax} bytes`);
  t.ok(through(bytes, []).equals(bytes), `a head longer than ${SectionMax} bytes, in one read`);
});

t.test('a head cut short by the connection\'s end is handed on as it came', async (t) => {
  const unfolder = new AnswerUnfolder();
  t.equal(unfolder.take(Buffer.from('HTTP/1.1 200 OK\r\nX: a\r\n b')).length, 0, 'held');
  t.equal(unfolder.end()?.toString(), 'HTTP/1.1 200 OK\r\nX: a\r\n b');
});

t.test('bytes that cannot begin an answer are handed on at once, not held (undici ends a kept connection on them)', async (t) => {
  const unfolder = new AnswerUnfolder();
  t.equal(unfolder.take(Buffer.from('HTTP/1.1 204 No Content\r\n\r\n')).toString(), 'HTTP/1.1 204 No Content\r\n\r\n');
  t.equal(unfolder.take(Buffer.from('ok')).toString(), 'ok', 'a body after a 204');
  t.ok(unfolder.passing());
  const other = new AnswerUnfolder();
  t.equal(other.take(Buffer.from('HTT')).length, 0, 'the beginning of a status line is held');
  t.equal(other.take(Buffer.from('PS/1.1 200 OK\r\n')).toString(), 'HTTPS/1.1 200 OK\r\n', 'and handed on once it is not one');
});
