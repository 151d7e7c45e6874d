/**
 * JSON written straight into UTF-8 bytes, for the canonical text of a checkout info (signature.ts):
 * strings are escaped, checked and encoded in one pass over their characters. Built as a string
 * instead, the text was thousands of concatenated pieces, which V8 joins (flattens) before it can
 * encode them: joining and encoding cost as much again as writing the text.
 *
 * A writer is reused (its memory grows to the largest text and stays): `reset`, write, then copy
 * the bytes out (`bytes()` is a view, valid until the next reset).
 */
export class JsonBytes {
  private buf: Uint8Array;
  private at = 0;

  constructor(size = 16 * 1024) {
    this.buf = new Uint8Array(size);
  }

  reset(): void {
    this.at = 0;
  }

  get length(): number {
    return this.at;
  }

  /** The bytes written since the reset, from `start`: a view of the writer's memory. */
  bytes(start = 0): Uint8Array {
    return this.buf.subarray(start, this.at);
  }

  /** Bytes as they are (member names with their punctuation, made once). */
  raw(bytes: Uint8Array): void {
    this.room(bytes.length);
    // A loop: TypedArray#set costs more than the copy for a few bytes.
    const buf = this.buf;
    let at = this.at;
    for (let i = 0; i < bytes.length; i++) buf[at++] = bytes[i]!;
    this.at = at;
  }

  /** One ASCII character by its code. */
  char(code: number): void {
    this.room(1);
    this.buf[this.at++] = code;
  }

  /** Text that is JSON already (canonicalize's or JSON.stringify's), encoded as it is. */
  json(text: string): void {
    this.room(text.length * 3);
    this.at = this.encode(text, this.at, false);
  }

  /**
   * A JSON string as RFC 8785 (and JSON.stringify) writes it: as it is when nothing in it needs an
   * escape, else JSON.stringify's escapes. A lone surrogate has no canonical form: a TypeError.
   */
  string(value: string): void {
    this.room(value.length * 3 + 2);
    const start = this.at;
    this.buf[start] = 0x22;
    const end = this.encode(value, start + 1, true);
    if (end < 0) {
      // Something to escape: rare, and written by JSON.stringify over what was begun.
      if (!value.isWellFormed()) throw new TypeError('a string with a lone surrogate has no canonical form');
      this.json(JSON.stringify(value));
      return;
    }
    this.buf[end] = 0x22;
    this.at = end + 1;
  }

  /** A number as RFC 8785 writes it (JSON.stringify's text); TypeError for one without a JSON form. */
  number(value: number): void {
    if (typeof value !== 'number' || !Number.isFinite(value)) throw new TypeError('a number without a JSON form');
    const text = `${value}`;
    this.room(text.length);
    for (let i = 0; i < text.length; i++) this.buf[this.at++] = text.charCodeAt(i);
  }

  /**
   * Encodes `text` as UTF-8 at `at` (room for 3 bytes per character is made); answers where it
   * ended, or -1 when `escapes` and a character needs an escape (a quote, a backslash, a control
   * character). A lone surrogate is a TypeError.
   */
  private encode(text: string, at: number, escapes: boolean): number {
    const buf = this.buf;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c < 0x80) {
        if (escapes && (c < 0x20 || c === 0x22 || c === 0x5c)) return -1;
        buf[at++] = c;
      } else if (c < 0x800) {
        buf[at++] = 0xc0 | (c >> 6);
        buf[at++] = 0x80 | (c & 0x3f);
      } else if (c < 0xd800 || c > 0xdfff) {
        buf[at++] = 0xe0 | (c >> 12);
        buf[at++] = 0x80 | ((c >> 6) & 0x3f);
        buf[at++] = 0x80 | (c & 0x3f);
      } else {
        // A surrogate pair is one character of 4 bytes (as much room as its two halves were given).
        const low = text.charCodeAt(i + 1);
        if (c > 0xdbff || !(low >= 0xdc00 && low <= 0xdfff)) throw new TypeError('a string with a lone surrogate has no canonical form');
        const point = 0x10000 + ((c - 0xd800) << 10) + (low - 0xdc00);
        buf[at++] = 0xf0 | (point >> 18);
        buf[at++] = 0x80 | ((point >> 12) & 0x3f);
        buf[at++] = 0x80 | ((point >> 6) & 0x3f);
        buf[at++] = 0x80 | (point & 0x3f);
        i++;
      }
    }
    return at;
  }

  private room(bytes: number): void {
    if (this.at + bytes <= this.buf.length) return;
    const grown = new Uint8Array(Math.max(this.buf.length * 2, this.at + bytes));
    grown.set(this.buf.subarray(0, this.at));
    this.buf = grown;
  }
}
