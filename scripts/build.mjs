#!/usr/bin/env node
/**
 * `npm run build` (and, with --if-needed, the step before every CLI, `npm start` and `npm test`).
 *
 * Plain JavaScript, not compiled: it is what makes the compiled tree. It compiles into a staging
 * folder of its own (.build/staging, incremental), bundles the portal and drops compiled files whose
 * source is gone, copies the result into a fresh folder (.build/<n>), and then points `dist` at it by
 * replacing a symbolic link in one rename. So:
 *
 * - a process running from the old build (it loaded its modules by their real path) keeps its files
 *   whole, and one that starts sees either the old build or the new one, never half of one;
 * - builds started side by side (sixteen `npm run token` at once, a test run beside `npm start`)
 *   take turns on a lock, and one that finds the sources built meanwhile builds nothing;
 * - `--if-needed` builds only when the sources differ from those of the build `dist` points at (a
 *   fingerprint of their contents, kept in `dist/.build-stamp`): a CLI then starts at once.
 *
 * The last few builds are kept (a service started from one of them may still load a module lazily);
 * older ones are removed.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const builds = path.join(root, '.build');
const staging = path.join(builds, 'staging');
const dist = path.join(root, 'dist');
const lockDir = path.join(builds, 'lock');
const StampFile = '.build-stamp';
/** What the build reads: the compiled folders, the portal, the compiler's settings, the dependencies. */
const Inputs = ['service', 'src', 'actors', 'subjects', 'scripts', 'bench', 'test', 'portal', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json'];
const KeptBuilds = 3;
const LockWaitMs = 10 * 60_000;

const ifNeeded = process.argv.includes('--if-needed');

function fingerprint() {
  const hash = createHash('sha256');
  const visit = (relative) => {
    const file = path.join(root, relative);
    if (!existsSync(file)) return;
    if (statSync(file).isDirectory()) {
      for (const entry of readdirSync(file).sort()) if (entry !== 'node_modules') visit(path.join(relative, entry));
      return;
    }
    hash.update(`${relative}\0`).update(readFileSync(file)).update('\0');
  };
  for (const input of Inputs) visit(input);
  return hash.digest('hex');
}

function builtStamp() {
  try {
    return readFileSync(path.join(dist, StampFile), 'utf8').trim();
  } catch {
    return undefined;
  }
}

function sleep(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/** One build at a time: a folder made atomically, naming its holder; a dead holder's lock is taken over. */
function lock() {
  mkdirSync(builds, { recursive: true });
  const deadline = Date.now() + LockWaitMs;
  for (let said = false; ; ) {
    try {
      mkdirSync(lockDir);
      writeFileSync(path.join(lockDir, 'pid'), String(process.pid));
      return;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
    }
    const holder = lockHolder();
    // A holder that died, or one that died between making the folder and naming itself.
    if (holder ? !isAlive(holder) : Date.now() - lockAge() > 10_000) {
      rmSync(lockDir, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > deadline) throw new Error(`build: another build (pid ${holder || '?'}) holds ${lockDir}`);
    if (!said && !ifNeeded) {
      process.stderr.write(`build: waiting for another build (pid ${holder || '?'})\n`);
      said = true;
    }
    sleep(100);
  }
}

function lockHolder() {
  try {
    return Number(readFileSync(path.join(lockDir, 'pid'), 'utf8')) || 0;
  } catch {
    return 0;
  }
}

function lockAge() {
  try {
    return statSync(lockDir).mtimeMs;
  } catch {
    return 0;
  }
}

function unlock() {
  rmSync(lockDir, { recursive: true, force: true });
}

function run(command, args) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`build: ${path.basename(command)} ${args.join(' ')} failed (${result.status ?? result.signal})`);
}

/** Points dist at the build in one rename (a folder dist from before this layout is set aside first). */
function publish(folder) {
  const link = path.join(root, `dist.next-${process.pid}`);
  rmSync(link, { force: true });
  symlinkSync(path.relative(root, folder), link);
  if (existsSync(dist) && !isLink(dist)) renameSync(dist, path.join(builds, `old-${Date.now()}`));
  renameSync(link, dist);
}

function isLink(file) {
  try {
    readlinkSync(file);
    return true;
  } catch {
    return false;
  }
}

/** Keeps the newest builds (the current one among them); removes the rest. */
function prune(current) {
  const published = readdirSync(builds)
    .filter((name) => name !== 'staging' && name !== 'lock')
    .map((name) => ({ name, folder: path.join(builds, name), at: statSync(path.join(builds, name)).mtimeMs }))
    .sort((a, b) => b.at - a.at);
  for (const old of published.slice(KeptBuilds)) if (old.folder !== current) rmSync(old.folder, { recursive: true, force: true });
}

function build() {
  const stamp = fingerprint();
  if (ifNeeded && builtStamp() === stamp) return false;
  lock();
  try {
    // Another build may have finished while this one waited for the lock.
    const current = fingerprint();
    if (ifNeeded && builtStamp() === current) return false;
    if (ifNeeded) process.stderr.write('build: the sources changed since the last build: building\n');
    run(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', staging, '--tsBuildInfoFile', path.join(staging, '.tsbuildinfo')]);
    run(process.execPath, [path.join(staging, 'scripts/prune-dist.js'), staging]);
    run(process.execPath, [path.join(staging, 'scripts/build-portal.js'), path.join(staging, 'portal')]);
    writeFileSync(path.join(staging, StampFile), `${current}\n`);
    const folder = path.join(builds, `${Date.now()}-${current.slice(0, 8)}`);
    cpSync(staging, folder, { recursive: true });
    publish(folder);
    prune(folder);
    return true;
  } finally {
    unlock();
  }
}

try {
  build();
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
