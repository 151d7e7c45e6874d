import { existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../src/infra/project-root.js';

/**
 * `node prune-dist.js <build folder>` (a step of scripts/build.mjs): removes compiled files whose
 * TypeScript source is gone. tsc (incremental) writes its output folder but never deletes from it,
 * so a deleted test would still run from dist/test/. A file `<build>/<dir>/x.js` (and its .map and
 * .d.ts) goes when `<dir>/x.ts` does not exist. `<build>/portal` is the portal's bundle
 * (scripts/build-portal.ts), written whole by each build.
 */
const root = projectRoot();
const dist = path.resolve(process.argv[2] ?? path.join(root, 'dist'));
const Compiled = /\.(js|js\.map|d\.ts|d\.ts\.map)$/;

function prune(dir: string): number {
  let removed = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) removed += file === path.join(dist, 'portal') ? 0 : prune(file);
    else if (Compiled.test(entry.name)) {
      const source = path.join(root, path.relative(dist, file)).replace(Compiled, '.ts');
      if (!existsSync(source)) {
        rmSync(file);
        removed++;
      }
    }
  }
  return removed;
}

const removed = prune(dist);
if (removed) process.stdout.write(`prune-dist: removed ${removed} compiled files whose source is gone\n`);
