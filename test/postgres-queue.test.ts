import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import t from 'tap';

interface PoolQueue<T> {
  readonly length: number;
  push(x: T): T;
  shift(): T | undefined;
  remove(x: T): T | null;
}

// The package exports neither its internals nor package.json: find its folder from the main entry (cjs/src/index.js).
const postgresDir = path.resolve(path.dirname(createRequire(import.meta.url).resolve('postgres')), '..', '..');
// The pool's internal queue, patched in patches/postgres+*.patch (see patches/README.md). The package
// does not export it, so it is loaded from its file.
const { default: Queue } = (await import(pathToFileURL(path.join(postgresDir, 'src/queue.js')).href)) as { default: <T>() => PoolQueue<T> };

t.test('the patched queue is installed', async (t) => {
  for (const file of ['src/queue.js', 'cjs/src/queue.js']) {
    t.match(readFileSync(path.join(postgresDir, file), 'utf8'), /xs\.indexOf\(x, index\)/, `${file} carries the patch (run npm install)`);
  }
});

t.test('behaves like a plain array under any sequence of push, shift and remove', async () => {
  // Weighted so that the queue mostly grows: long runs of shifts without emptying reach the
  // compaction branch (more than 1024 holes), as a saturated pool does.
  const op = fc.oneof(
    { arbitrary: fc.record({ kind: fc.constant('push' as const) }), weight: 5 },
    { arbitrary: fc.record({ kind: fc.constant('shift' as const) }), weight: 4 },
    { arbitrary: fc.record({ kind: fc.constant('remove' as const), pick: fc.nat() }), weight: 1 },
  );
  fc.assert(
    fc.property(fc.array(op, { minLength: 2000, maxLength: 12_000 }), (ops) => {
      const queue = Queue<number>();
      const model: number[] = [];
      let next = 0;
      for (const o of ops) {
        if (o.kind === 'push') {
          queue.push(next);
          model.push(next++);
        } else if (o.kind === 'shift') {
          if (queue.shift() !== model.shift()) return false;
        } else {
          // Remove something present, or something already gone (as the pool does after a shift).
          const candidate = o.pick % (next + 1);
          const at = model.indexOf(candidate);
          const removed = queue.remove(candidate);
          if (at === -1 ? removed !== null : removed !== candidate) return false;
          if (at !== -1) model.splice(at, 1);
        }
        if (queue.length !== model.length) return false;
      }
      return true;
    }),
    { numRuns: 60 },
  );
});
