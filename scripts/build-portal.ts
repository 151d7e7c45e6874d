import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { projectRoot } from '../src/infra/project-root.js';

/**
 * `node build-portal.js <folder>`, the retailer portal's build (a step of scripts/build.mjs, into the
 * build's `portal` folder): esbuild bundles portal/src into one minified script, `app.js`, and a
 * chunk for each module the portal imports only when it needs it (`import()`: the CSV parser),
 * `chunk-<hash>.js`; every file the edge serves is written beside a gzip and a brotli copy, so the
 * edge answers compressed bytes without compressing per request. Nothing is fetched from elsewhere.
 */
const root = projectRoot();
const source = path.join(root, 'portal');
const out = path.resolve(process.argv[2] ?? path.join(root, 'dist/portal'));

await rm(out, { recursive: true, force: true });
await mkdir(out, { recursive: true });
const bundle = await build({
  entryPoints: { app: path.join(source, 'src/main.ts') },
  bundle: true,
  splitting: true,
  outdir: out,
  chunkNames: 'chunk-[hash]',
  minify: true,
  format: 'esm',
  target: ['chrome110', 'firefox110', 'safari16'],
  write: false,
  legalComments: 'none',
  logLevel: 'warning',
});
const files: Record<string, Uint8Array> = {
  ...Object.fromEntries(bundle.outputFiles.map((file) => [path.relative(out, file.path), file.contents])),
  'index.html': await readFile(path.join(source, 'index.html')),
  'styles.css': await readFile(path.join(source, 'styles.css')),
};
for (const [name, bytes] of Object.entries(files)) {
  await writeFile(path.join(out, name), bytes);
  await writeFile(path.join(out, `${name}.gz`), gzipSync(bytes, { level: 9 }));
  await writeFile(path.join(out, `${name}.br`), brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
}
