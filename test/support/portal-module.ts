import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import type { Test } from 'tap';
import { projectRoot } from '../../src/infra/project-root.js';

/**
 * A module of the portal (a path under portal/src) as the browser gets it: bundled by esbuild for
 * the browser, as scripts/build-portal.ts bundles the portal (its dependencies' browser builds, its
 * lazy imports included), then run here. The portal is not compiled by the tests' tsc (it is a
 * client with its own tsconfig), so the test states the module's shape as `T`.
 */
export async function importPortalModule<T>(t: Test, module: string): Promise<T> {
  const dir = await mkdtemp(path.join(tmpdir(), 'cp-portal-module-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'module.mjs');
  await build({
    entryPoints: [path.join(projectRoot(), 'portal/src', module)],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    outfile: file,
    logLevel: 'warning',
  });
  return (await import(pathToFileURL(file).href)) as T;
}
