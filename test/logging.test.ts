import { spawn } from 'node:child_process';
import path from 'node:path';
import t, { type Test } from 'tap';
import { freePort } from '../src/infra/processes.js';
import { projectRoot } from '../src/infra/project-root.js';
import { provisionInfrastructure, TestCheckoutSecret, TestSecret } from './support/service.js';

/**
 * What an operator sees of `npm start`: on a terminal, readable lines; piped into a log shipper, or
 * with LOG_FORMAT=json, one JSON object per line. The terminal is a real pseudo-terminal (util-linux
 * `script`), so the service decides by `isTTY` as it would in a shell.
 */

// Colours and cursor codes a terminal interprets.
// eslint-disable-next-line no-control-regex
const Escapes = /\u001b\[[0-9;?]*[A-Za-z]/g;

async function firstLinesUntilListening(t: Test, options: { terminal: boolean; env?: Record<string, string> }): Promise<string[]> {
  const infra = await provisionInfrastructure(t);
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    DATABASE_URL: infra.databaseUrl,
    ...infra.natsEnv('service'),
    DATA_DIR: infra.dataDir,
    JWT_SECRET: TestSecret,
    CHECKOUT_SIGNING_SECRET: TestCheckoutSecret,
    PORT: String(await freePort()),
    ...options.env,
  };
  const main = path.join(projectRoot(), 'dist', 'service', 'main.js');
  const child = options.terminal
    ? spawn('script', ['--quiet', '--return', '--command', `exec '${process.execPath}' '${main}'`, '/dev/null'], { env, stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(process.execPath, [main], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  t.teardown(async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "checkout platform listening" line within 30 s: ${output}`)), 30_000);
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (/checkout platform listening[^\n]*\n/.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`exited (${code}) before listening: ${output}`)));
  });
  child.kill('SIGTERM');
  await exited;
  return output.replace(Escapes, '').split(/\r?\n/).filter((line) => line.trim() !== '');
}

t.test('prints one readable line per event on a terminal', async (t) => {
  const lines = await firstLinesUntilListening(t, { terminal: true });
  const listening = lines.find((l) => l.includes('checkout platform listening'));
  t.ok(listening, lines.join('\n'));
  t.match(listening, /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: checkout platform listening \{.*"url":"http:\/\/127\.0\.0\.1:\d+".*\}$/);
  t.notOk(lines.some((l) => l.startsWith('{')), 'no JSON lines');
});

t.test('prints JSON lines on a terminal when LOG_FORMAT=json', async (t) => {
  const lines = await firstLinesUntilListening(t, { terminal: true, env: { LOG_FORMAT: 'json' } });
  const parsed = lines.map((l) => JSON.parse(l) as { level: number; msg: string });
  t.ok(parsed.some((l) => l.msg === 'checkout platform listening' && l.level === 30));
});

t.test('prints JSON lines when its output is not a terminal', async (t) => {
  const lines = await firstLinesUntilListening(t, { terminal: false });
  const parsed = lines.map((l) => JSON.parse(l) as { msg: string; url?: string });
  t.match(parsed.find((l) => l.msg === 'checkout platform listening'), { url: /^http:\/\/127\.0\.0\.1:\d+$/ });
});
