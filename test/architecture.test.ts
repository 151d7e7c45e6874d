import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import t from 'tap';
import { projectRoot } from '../src/infra/project-root.js';

/**
 * The import graph of the program (service, src, actors, subjects): no module reaches itself
 * through its imports. Which room may import which is eslint's rule (eslint.config.js).
 */
const root = projectRoot();
const Rooms = ['service', 'src', 'actors', 'subjects'];

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(path.join(root, dir), { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((e) => (e.isDirectory() ? sourceFiles(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [])),
  );
  return nested.flat();
}

async function importGraph(): Promise<Map<string, string[]>> {
  const files = (await Promise.all(Rooms.map(sourceFiles))).flat();
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = await readFile(path.join(root, file), 'utf8');
    const targets = [...text.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s+'(\.{1,2}\/[^']+)\.js'/gms)].map((m) =>
      path.normalize(path.join(path.dirname(file), `${m[1]}.ts`)),
    );
    graph.set(file, targets);
  }
  return graph;
}

/** Every cycle's modules, found as the strongly connected components with more than one member. */
function cycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

t.test('no module imports itself through others', async (t) => {
  const graph = await importGraph();
  t.ok(graph.size > 100, `reads the program's modules (${graph.size})`);
  t.same(cycles(graph), []);
});

t.test('finds a cycle when there is one', async (t) => {
  const graph = new Map([
    ['a.ts', ['b.ts']],
    ['b.ts', ['c.ts']],
    ['c.ts', ['a.ts']],
    ['d.ts', ['a.ts']],
  ]);
  t.same(cycles(graph), [['a.ts', 'b.ts', 'c.ts']]);
});
