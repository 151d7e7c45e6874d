/**
 * Reads a receiver's HTTP/1.x answer to a webhook POST as its bytes arrive (sender.ts): the status,
 * the body's first `maxBody` bytes (chunked bodies decoded), and whether the connection can carry
 * the next request. Informational answers (1xx) before the final one are skipped.
 */
export interface Answer {
  status: number;
  /** The body's first bytes, at most `maxBody`. */
  body: Buffer;
  /** The answer was read to its end, and the receiver keeps the connection open. */
  reusable: boolean;
  /** How long the receiver keeps an idle connection (`Keep-Alive: timeout=N`), if it says. */
  keepAliveMs?: number;
}

export interface AnswerReader {
  /** Takes the next bytes; answers the answer once it is complete (or once `maxBody` bytes of its body are read). */
  push(chunk: Buffer): Answer | undefined;
  /** The connection ended: the answer as far as it came, if its status came. */
  end(): Answer | undefined;
  /** Why the bytes are not an answer this reader understands (then nothing more is read). */
  readonly failed: string | undefined;
}

/** An answer's head (status line and headers) at most. */
const MaxHeadBytes = 16 * 1024;
const CRLF = Buffer.from('\r\n');
const HeadEnd = Buffer.from('\r\n\r\n');

type Body =
  | { kind: 'none' }
  | { kind: 'length'; left: number }
  | { kind: 'close' }
  | { kind: 'chunked'; step: 'size' | 'data' | 'data-end' | 'trailer'; left: number };

export function readAnswer(maxBody: number): AnswerReader {
  let pending: Buffer = Buffer.alloc(0);
  let head: { status: number; persistent: boolean; keepAliveMs?: number } | undefined;
  let body: Body | undefined;
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let failed: string | undefined;
  let finished = false;

  const answer = (reusable: boolean): Answer => {
    finished = true;
    return { status: head!.status, body: Buffer.concat(kept), reusable, ...(head!.keepAliveMs === undefined ? {} : { keepAliveMs: head!.keepAliveMs }) };
  };
  const fail = (reason: string) => {
    failed = reason;
    return undefined;
  };
  /** Keeps body bytes; answers whether `maxBody` is reached. */
  const keep = (bytes: Buffer): boolean => {
    const room = maxBody - keptBytes;
    if (room > 0) {
      const part = bytes.subarray(0, room);
      kept.push(part);
      keptBytes += part.length;
    }
    return keptBytes >= maxBody;
  };

  /** Reads the head from `pending`; false: more bytes are needed (or it failed). */
  const readHead = (): boolean => {
    for (;;) {
      const end = pending.indexOf(HeadEnd);
      if (end < 0) {
        if (pending.length > MaxHeadBytes) fail(`an answer head over ${MaxHeadBytes} bytes`);
        return false;
      }
      const lines = pending.subarray(0, end).toString('latin1').split('\r\n');
      pending = pending.subarray(end + HeadEnd.length);
      const statusLine = /^HTTP\/1\.([01]) (\d{3})(?: |$)/.exec(lines[0] ?? '');
      if (!statusLine) return !!fail(`not an HTTP/1.x answer: ${JSON.stringify((lines[0] ?? '').slice(0, 80))}`);
      const status = Number(statusLine[2]);
      if (status === 101) return !!fail('the receiver switched protocols');
      if (status < 200) continue; // informational (100 Continue, 103 Early Hints): the answer follows
      let length: number | undefined;
      let chunked = false;
      let close = statusLine[1] === '0';
      let keepAliveMs: number | undefined;
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(':');
        if (colon <= 0) return !!fail(`a header line without a name: ${JSON.stringify(line.slice(0, 80))}`);
        const name = line.slice(0, colon).trim().toLowerCase();
        const value = line.slice(colon + 1).trim();
        if (name === 'content-length') {
          const n = /^\d{1,15}$/.test(value) ? Number(value) : NaN;
          if (Number.isNaN(n) || (length !== undefined && length !== n)) return !!fail(`an invalid content-length: ${JSON.stringify(value.slice(0, 40))}`);
          length = n;
        } else if (name === 'transfer-encoding') {
          chunked = value.toLowerCase().split(',').at(-1)?.trim() === 'chunked';
          if (!chunked) close = true; // a body that ends with the connection
        } else if (name === 'connection') {
          const tokens = value.toLowerCase().split(',').map((t) => t.trim());
          if (tokens.includes('close')) close = true;
          else if (tokens.includes('keep-alive') && statusLine[1] === '0') close = false;
        } else if (name === 'keep-alive') {
          const timeout = /(?:^|,)\s*timeout=(\d+)/i.exec(value)?.[1];
          if (timeout !== undefined) keepAliveMs = Number(timeout) * 1000;
        }
      }
      head = { status, persistent: !close, ...(keepAliveMs === undefined ? {} : { keepAliveMs }) };
      body =
        status === 204 || status === 304
          ? { kind: 'none' }
          : chunked
            ? { kind: 'chunked', step: 'size', left: 0 }
            : length !== undefined
              ? { kind: 'length', left: length }
              : { kind: 'close' };
      return true;
    }
  };

  /** Reads body bytes from `pending`; answers the answer when it is complete or enough is kept. */
  const readBody = (): Answer | undefined => {
    const b = body!;
    if (b.kind === 'none') return answer(head!.persistent && !pending.length);
    if (b.kind === 'close') {
      const full = keep(pending);
      pending = Buffer.alloc(0);
      return full ? answer(false) : undefined;
    }
    if (b.kind === 'length') {
      const part = pending.subarray(0, b.left);
      pending = pending.subarray(part.length);
      b.left -= part.length;
      const full = keep(part);
      if (b.left === 0) return answer(head!.persistent && !pending.length);
      return full ? answer(false) : undefined;
    }
    for (;;) {
      if (b.step === 'size' || b.step === 'trailer') {
        const end = pending.indexOf(CRLF);
        if (end < 0) {
          if (pending.length > 1024) return fail('a chunk size or trailer line over 1 KB');
          return undefined;
        }
        const line = pending.subarray(0, end).toString('latin1');
        pending = pending.subarray(end + CRLF.length);
        if (b.step === 'trailer') {
          if (line === '') return answer(head!.persistent && !pending.length);
          continue;
        }
        const size = /^([0-9a-fA-F]{1,12})\s*(?:;.*)?$/.exec(line)?.[1];
        if (size === undefined) return fail(`an invalid chunk size: ${JSON.stringify(line.slice(0, 40))}`);
        b.left = parseInt(size, 16);
        b.step = b.left === 0 ? 'trailer' : 'data';
      } else if (b.step === 'data') {
        if (!pending.length) return undefined;
        const part = pending.subarray(0, b.left);
        pending = pending.subarray(part.length);
        b.left -= part.length;
        if (keep(part)) return answer(false);
        if (b.left === 0) b.step = 'data-end';
      } else {
        if (pending.length < 2) return undefined;
        if (pending[0] !== 0x0d || pending[1] !== 0x0a) return fail('a chunk without its CRLF');
        pending = pending.subarray(2);
        b.step = 'size';
      }
    }
  };

  return {
    push(chunk) {
      if (failed || finished) return undefined;
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      if (!head && !readHead()) return undefined;
      return readBody();
    },
    end() {
      if (failed || finished || !head) return undefined;
      return answer(false);
    },
    get failed() {
      return failed;
    },
  };
}
