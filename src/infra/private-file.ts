import { chmod, link, rename, unlink, writeFile } from 'node:fs/promises';

/**
 * Writes a file only its owner may read, whole: a temp file renamed over it, or with `wx` linked to
 * its name only if there is none (EEXIST: another process made it first), so that no reader sees it
 * half written.
 */
export async function writePrivate(file: string, contents: string, flag: 'w' | 'wx' = 'w'): Promise<void> {
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, contents, { mode: 0o600 });
  await chmod(temp, 0o600);
  if (flag === 'w') return rename(temp, file);
  try {
    await link(temp, file);
  } finally {
    await unlink(temp);
  }
}
