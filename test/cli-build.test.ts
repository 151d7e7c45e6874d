import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { cp, mkdtemp, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { projectRoot } from '../src/infra/project-root.js';

/**
 * The CLIs run what is built and build only when the sources changed (scripts/build.mjs): sixteen
 * `npm run --silent token` side by side all print a token, and builds started side by side while the
 * sources changed take turns, build once, and swap the new build in whole under a reader.
 */
const root = projectRoot();

function npmRun(cwd: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '--silent', ...args], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('exit', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

const execFileAsync = promisify(execFile);
const Jwt = /^[\w-]+\.[\w-]+\.[\w-]+$/;

t.test('sixteen npm run --silent token side by side all print a token, and none builds (the build is current)', async (t) => {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'cp-cli-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const before = await readlink(path.join(root, 'dist'));
  const calls = await Promise.all(
    Array.from({ length: 16 }, (_, i) => npmRun(root, ['token', '--', '--project', `acme-${i}`, '--permissions', 'shopsRead'], { DATA_DIR: dataDir })),
  );
  t.same(calls.map((c) => c.code), Array(16).fill(0), 'every call exits 0', { stderr: calls.map((c) => c.stderr).filter(Boolean) });
  t.ok(calls.every((c) => Jwt.test(c.stdout.trim())), 'each prints one token and nothing else');
  t.equal(await readlink(path.join(root, 'dist')), before, 'dist still points at the same build');
});

/**
 * A copy of the project (its sources, the compiler's staging folder and the current build; the
 * dependencies linked), so that its sources can change without touching the tree the other test
 * files run from.
 */
async function copyOfProject(t: Test): Promise<string> {
  const copy = await mkdtemp(path.join(tmpdir(), 'cp-build-'));
  t.teardown(() => rm(copy, { recursive: true, force: true }));
  for (const entry of ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'service', 'src', 'actors', 'subjects', 'scripts', 'bench', 'test', 'portal', 'migrations']) {
    await cp(path.join(root, entry), path.join(copy, entry), { recursive: true });
  }
  await symlink(path.join(root, 'node_modules'), path.join(copy, 'node_modules'));
  // The staging folder makes the copy's build incremental, as a developer's next build is; the
  // current build is the copy's too (the same sources, as long as nobody changed them since).
  await cp(path.join(root, '.build', 'staging'), path.join(copy, '.build', 'staging'), { recursive: true });
  const current = await readlink(path.join(root, 'dist'));
  await cp(path.join(root, current), path.join(copy, current), { recursive: true });
  await symlink(current, path.join(copy, 'dist'));
  return copy;
}

t.test('builds started side by side after a change take turns: one builds, all run the new build, and a reader never sees half of one', async (t) => {
  const copy = await copyOfProject(t);
  // The current build is of the sources as they were when this run began (a developer may have
  // changed them since): made the copy's own here, if it is not.
  await execFileAsync(process.execPath, ['scripts/build.mjs', '--if-needed'], { cwd: copy });
  const unchanged = await npmRun(copy, ['token', '--', '--project', 'acme-1', '--permissions', 'shopsRead'], { DATA_DIR: path.join(copy, 'data') });
  t.equal(unchanged.stderr, '', 'with the sources unchanged, nothing is built');
  const first = await readlink(path.join(copy, 'dist'));
  const appJs = async () => readFile(path.join(copy, 'dist', 'portal', 'app.js'), 'utf8');
  const before = await appJs();

  // A change the portal's bundle shows, and one the token CLI prints.
  const words = path.join(copy, 'portal', 'src', 'main.ts');
  await writeFile(words, `${await readFile(words, 'utf8')}\nconsole.debug('build test marker');\n`);
  const token = path.join(copy, 'scripts', 'token.ts');
  await writeFile(token, (await readFile(token, 'utf8')).replace('async function main(): Promise<void> {', "async function main(): Promise<void> {\n  process.stderr.write('new build\\n');"));

  // A reader of the served bundle, all the while: each read is the old file or the new one, whole.
  let reading = true;
  const seen = new Set<string>();
  const reader = (async () => {
    while (reading) seen.add(await appJs().catch((err: unknown) => `unreadable: ${String(err)}`));
  })();
  const calls = await Promise.all(Array.from({ length: 4 }, () => npmRun(copy, ['token', '--', '--project', 'acme-1', '--permissions', 'shopsRead'], { DATA_DIR: path.join(copy, 'data') })));
  reading = false;
  await reader;

  t.same(calls.map((c) => c.code), [0, 0, 0, 0], 'every call exits 0', { stderr: calls.map((c) => c.stderr) });
  t.ok(calls.every((c) => Jwt.test(c.stdout.trim())), 'each prints a token');
  t.ok(calls.every((c) => c.stderr.includes('new build')), 'each ran the new build');
  t.equal(calls.filter((c) => c.stderr.includes('building')).length, 1, 'one of them built');
  t.not(await readlink(path.join(copy, 'dist')), first, 'dist points at a new folder');
  const after = await appJs();
  t.match(after, /build test marker/, 'the new bundle is served');
  t.same([...seen].filter((text) => text !== before && text !== after).map((text) => text.slice(0, 80)), [], 'the reader saw only whole bundles');
});
