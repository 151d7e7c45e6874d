import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { findExecutable } from '../../src/infra/processes.js';

/**
 * Receipts are read as a person's PDF viewer would, with a real extractor: poppler's pdftotext.
 * CI installs it (.ci/run); on a machine without it the tests that read a receipt's text are
 * skipped with the reason (`{ skip: withoutPdftotext }`), so `npm test` still passes on a machine
 * that has only Node and nats-server.
 */
const pdftotext = await findExecutable('pdftotext');
export const withoutPdftotext: string | false = pdftotext ? false : 'pdftotext is not installed (Debian: apt install poppler-utils)';

const run = promisify(execFile);

/** The text of a PDF as pdftotext reads it (layout kept), no-break spaces as spaces. */
export async function pdfText(pdf: Buffer): Promise<string> {
  if (!pdftotext) throw new Error(String(withoutPdftotext));
  const dir = await mkdtemp(path.join(tmpdir(), 'receipt-'));
  try {
    const file = path.join(dir, 'receipt.pdf');
    await writeFile(file, pdf);
    const { stdout } = await run(pdftotext, ['-layout', '-enc', 'UTF-8', file, '-'], { maxBuffer: 64 * 1024 * 1024 });
    return stdout.replace(/\u00a0/g, ' ');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
