import type { Readable } from 'node:stream';

/**
 * Folded header lines (obs-fold: a field line continued on the next line after SP or HTAB) in the
 * answers of one connection, replaced by spaces before undici reads them, as RFC 9112 5.2 asks of
 * a user agent ("MUST replace each received obs-fold with one or more SP octets prior to
 * interpreting the field value"). undici's parser (llhttp) refuses them since CVE-2024-27982 and
 * turns them on only with its lenient-headers flag, which undici does not expose and which would
 * also let through every other malformed header value; so the fold is undone on the bytes the
 * parser reads, not in the parser.
 *
 * How: the connection's own `push` (where net and tls hand every read to the readable side: Node's
 * `onStreamRead`; on TLS the bytes already decrypted) goes through an AnswerUnfolder first. The
 * socket stays the one undici made (its TLS session cache, the destination policy's `lookup` at
 * connect time, its options) and undici reads it as before.
 *
 * The unfolder follows the answers' framing to touch header sections (and chunked trailers) only:
 * a head is held until its empty line; in it, each CRLF followed by SP or HTAB that ends a field
 * line becomes SP, as do the SP and HTAB after it (same length: byte counts stay true); then
 * Content-Length bytes, or chunked data (each chunk's size line read, its bytes passed over), go
 * through untouched, and the next answer's head follows. Anything it does not frame exactly as
 * llhttp does ends its work for the connection (no length: a body to the connection's end; both
 * Content-Length and Transfer-Encoding; two Content-Length; a bare CR or LF; a first field line
 * after SP; a 101; an unexpected 1xx; a section longer than SectionMax; bytes that cannot begin a
 * status line, such as a body after a 204): from there every byte passes as it came, at once, and
 * undici judges them as it would have. It assumes no answer to HEAD (whose Content-Length frames
 * no body): the platform sends none (OutgoingRequest).
 *
 * What undici sees later than it would: a head (at most SectionMax bytes) until its last byte
 * came. A receiver that sends the beginning of a head on a kept connection before it is asked has
 * it read with the next request's answer (undici would have closed the connection on it), which
 * then fails: a broken receiver's answer, as any other.
 */
export function unfoldAnswers(socket: Readable & { [Unfolded]?: true }): void {
  if (socket[Unfolded]) return;
  socket[Unfolded] = true;
  const unfolder = new AnswerUnfolder();
  const push = socket.push;
  socket.push = function (chunk: unknown, encoding?: BufferEncoding) {
    if (chunk === null) {
      const rest = unfolder.end();
      if (rest) push.call(this, rest);
      return push.call(this, null);
    }
    if (!Buffer.isBuffer(chunk) || unfolder.passing()) return push.call(this, chunk, encoding);
    return push.call(this, unfolder.take(chunk));
  };
}

const Unfolded = Symbol('answers unfolded');

/** The longest header section (or chunk size line) unfolded; twice undici's default maxHeaderSize. */
export const SectionMax = 32 * 1024;

const State = {
  /** An answer's head: held until its empty line. */
  Head: 0,
  /** Content-Length bytes of a body. */
  Body: 1,
  /** A chunk size line, held until its CRLF. */
  ChunkSize: 2,
  /** A chunk's bytes. */
  ChunkData: 3,
  /** The CRLF after a chunk's bytes. */
  ChunkEnd: 4,
  /** The trailer section after the last chunk: held until its empty line. */
  Trailers: 5,
  /** Everything passes untouched to the connection's end. */
  Pass: 6,
} as const;
type State = (typeof State)[keyof typeof State];

const CRLFCRLF = Buffer.from('\r\n\r\n');
const CRLF = Buffer.from('\r\n');
const BareCrOrLf = /\r(?!\n)|(?<!\r)\n/;

/** A CR not followed by LF or an LF not after CR in bytes that continue what is held (a CR may end them: its LF may come next). */
function bareCrOrLf(held: Buffer | null, heldLength: number, more: Buffer): boolean {
  // What is held was checked: only its last CR matters here (any other byte stands as one that is not CR).
  const before = held && heldLength > 0 ? (held[heldLength - 1] === 0x0d ? '\r' : ' ') : '';
  return /\r(?!\n|$)|(?<!\r)\n/.test(before + more.toString('latin1'));
}
const AnswerStart = Buffer.from('HTTP/1.');

/** Whether what is held and chunk[at...] begin as a status line does (as far as they go). */
function beginsAnswer(held: Buffer | null, heldLength: number, chunk: Buffer, at: number): boolean {
  for (let i = 0; i < AnswerStart.length; i++) {
    const byte = i < heldLength ? held![i] : chunk[at + i - heldLength];
    if (byte === undefined) return true;
    if (byte !== AnswerStart[i]) return false;
  }
  return true;
}

const isSpaceOrTab = (byte: number) => byte === 0x20 || byte === 0x09;
const StatusLine = /^HTTP\/1\.[01] (\d{3})(?: |$)/;
const ChunkSizeLine = /^([0-9A-Fa-f]{1,12})(?:;[^\r\n]*)?$/;

export class AnswerUnfolder {
  private state: State = State.Head;
  /** Bytes still to pass over (Body, ChunkData, ChunkEnd). */
  private remaining = 0;
  /** A section (or size line) begun in an earlier read. */
  private held: Buffer | null = null;
  private heldLength = 0;

  passing(): boolean {
    return this.state === State.Pass;
  }

  /** The bytes of one read as undici is to see them now (what belongs to an unfinished section comes later). */
  take(chunk: Buffer): Buffer {
    const out: Buffer[] = [];
    let from = 0; // chunk[from, at) is passed as it came
    let at = 0;
    while (at < chunk.length && this.state !== State.Pass) {
      const state = this.state;
      if (state === State.Body || state === State.ChunkData) {
        const step = Math.min(this.remaining, chunk.length - at);
        at += step;
        this.remaining -= step;
        if (this.remaining === 0) {
          if (state === State.Body) this.state = State.Head;
          else [this.state, this.remaining] = [State.ChunkEnd, 2];
        }
        continue;
      }
      if (state === State.ChunkEnd) {
        if (chunk[at] !== CRLF[2 - this.remaining]) {
          this.state = State.Pass;
          break;
        }
        at++;
        if (--this.remaining === 0) this.state = State.ChunkSize;
        continue;
      }
      // A section or size line: read whole, from what is held and this read.
      if (at > from) out.push(chunk.subarray(from, at));
      from = at;
      const found = this.section(chunk, at);
      if (found === 'held') {
        from = at = chunk.length;
      } else if (found === 'pass') {
        if (this.heldLength > 0) out.push(this.release());
        this.state = State.Pass;
      } else {
        out.push(this.read(found.bytes));
        from = at = found.next;
      }
    }
    if (from < chunk.length) out.push(chunk.subarray(from));
    return out.length === 1 ? out[0]! : Buffer.concat(out);
  }

  /** What is held when the connection ends, as it came. */
  end(): Buffer | null {
    this.state = State.Pass;
    return this.heldLength > 0 ? this.release() : null;
  }

  /**
   * The section (or size line) that began in what is held or begins at chunk[at], whole, and where
   * this read goes on after it; 'held' when it goes on past this read (held then); 'pass' when it
   * is longer than SectionMax or has a bare CR or LF (not unfolded: all passes as it came from here).
   */
  private section(chunk: Buffer, at: number): { bytes: Buffer; next: number } | 'held' | 'pass' {
    // Bytes that cannot begin an answer are not held: undici is to see them at once (on a kept
    // connection between answers, they end it before it carries another request).
    if (this.state === State.Head && this.heldLength < AnswerStart.length && !beginsAnswer(this.held, this.heldLength, chunk, at)) return 'pass';
    const marker = this.state === State.ChunkSize ? CRLF : CRLFCRLF;
    let end = -1;
    if (this.heldLength === 0) {
      // A trailer section may be empty: the CRLF right after the last chunk's size line.
      if (this.state === State.Trailers && chunk[at] === 0x0d && chunk[at + 1] === 0x0a) end = at + 2;
    } else if (this.state === State.Trailers && this.heldLength === 1 && this.held![0] === 0x0d && chunk[at] === 0x0a) {
      end = at + 1;
    } else {
      // The end may begin in what is held.
      const tail = Math.min(this.heldLength, marker.length - 1);
      const probe = Buffer.concat([this.held!.subarray(this.heldLength - tail, this.heldLength), chunk.subarray(at, at + marker.length - 1)]);
      const found = probe.indexOf(marker);
      if (found >= 0) end = at + found + marker.length - tail;
    }
    if (end < 0) {
      const found = chunk.indexOf(marker, at);
      if (found >= 0) end = found + marker.length;
    }
    if (end < 0) {
      const more = chunk.subarray(at);
      if (this.heldLength + more.length > SectionMax || bareCrOrLf(this.held, this.heldLength, more)) return 'pass';
      this.hold(more);
      return 'held';
    }
    if (this.heldLength + end - at > SectionMax) return 'pass';
    if (this.heldLength === 0) return { bytes: chunk.subarray(at, end), next: end };
    const bytes = Buffer.concat([this.held!.subarray(0, this.heldLength), chunk.subarray(at, end)]);
    this.held = null;
    this.heldLength = 0;
    return { bytes, next: end };
  }

  /** Held in a buffer that grows by doubling: a section that comes a byte at a time is not copied over and over. */
  private hold(bytes: Buffer) {
    if (!this.held || this.held.length < this.heldLength + bytes.length) {
      const grown = Buffer.allocUnsafe(Math.min(SectionMax, Math.max(1024, 2 * (this.heldLength + bytes.length))));
      this.held?.copy(grown, 0, 0, this.heldLength);
      this.held = grown;
    }
    bytes.copy(this.held, this.heldLength);
    this.heldLength += bytes.length;
  }

  private release(): Buffer {
    const bytes = this.held!.subarray(0, this.heldLength);
    this.held = null;
    this.heldLength = 0;
    return bytes;
  }

  /** A whole section (or size line): unfolded where it is a head or trailers, and the state after it. */
  private read(bytes: Buffer): Buffer {
    const text = bytes.toString('latin1');
    if (BareCrOrLf.test(text)) return this.pass(bytes);
    if (this.state === State.ChunkSize) {
      const size = ChunkSizeLine.exec(text.slice(0, -2));
      if (!size) return this.pass(bytes);
      const length = parseInt(size[1]!, 16);
      if (length === 0) this.state = State.Trailers;
      else [this.state, this.remaining] = [State.ChunkData, length];
      return bytes;
    }
    const head = this.state === State.Head;
    // Field lines begin after the status line (a head) or at once (trailers).
    const fields = head ? text.indexOf('\r\n') + 2 : 0;
    // An empty line where the status line should be, or a first field line after SP or HTAB (nothing to continue).
    if ((head && fields === 2) || isSpaceOrTab(text.charCodeAt(fields))) return this.pass(bytes);
    let unfolded: Buffer | null = null;
    for (let crlf = text.indexOf('\r\n', fields); crlf >= 0 && crlf + 2 < text.length; crlf = text.indexOf('\r\n', crlf + 2)) {
      if (!isSpaceOrTab(text.charCodeAt(crlf + 2))) continue;
      // The fold (CRLF and the spaces or tabs after it) becomes as many SP.
      unfolded ??= Buffer.from(bytes);
      for (let i = crlf; i === crlf || i === crlf + 1 || isSpaceOrTab(unfolded[i]!); i++) unfolded[i] = 0x20;
    }
    if (!head) {
      this.state = State.Head;
      return unfolded ?? bytes;
    }
    this.frame(unfolded ? unfolded.toString('latin1') : text, fields);
    return unfolded ?? bytes;
  }

  /** How the body of the answer with this head (unfolded) is framed, as llhttp frames it; Pass where unsure. */
  private frame(head: string, fields: number) {
    const status = StatusLine.exec(head.slice(0, fields - 2));
    if (!status) return void (this.state = State.Pass);
    const code = Number(status[1]);
    // 100, 102, 103: another head follows; 101 (a protocol switch) and other 1xx are not framed here.
    if (code < 200) return void (this.state = code === 100 || code === 102 || code === 103 ? State.Head : State.Pass);
    if (code === 204 || code === 304) return void (this.state = State.Head);
    let length: string | undefined;
    let coding: string | undefined;
    for (const line of head.slice(fields, -4).split('\r\n')) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).toLowerCase();
      if (name === 'content-length') {
        if (length !== undefined) return void (this.state = State.Pass);
        length = line.slice(colon + 1).trim();
      } else if (name === 'transfer-encoding') {
        if (coding !== undefined) return void (this.state = State.Pass);
        coding = line.slice(colon + 1).trim().toLowerCase();
      }
    }
    if (coding !== undefined) {
      // Chunked only when it is the last coding and only there; else (a body to the end, or an error) not framed here.
      const codings = coding.split(',').map((part) => part.trim());
      const chunked = length === undefined && codings.indexOf('chunked') === codings.length - 1;
      return void (this.state = chunked ? State.ChunkSize : State.Pass);
    }
    if (length === undefined || !/^\d{1,15}$/.test(length)) return void (this.state = State.Pass);
    this.remaining = Number(length);
    this.state = this.remaining === 0 ? State.Head : State.Body;
  }

  private pass(bytes: Buffer): Buffer {
    this.state = State.Pass;
    return bytes;
  }
}
