import { execFile, spawn } from 'node:child_process';
import { access, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import t, { type Test } from 'tap';
import { projectRoot } from '../src/infra/project-root.js';
import { subjectToken } from '../subjects/common.js';
import { patchPos, seedCheckout } from './support/checkout.js';
import { startTestService, TestProject } from './support/service.js';

/**
 * The Go example of docs/integrators.md (docs/examples/go-follow-events), built with Debian's Go
 * and nats.go 1.22 (golang-go, golang-github-nats-io-go-nats-dev: .ci/run installs them) and run as
 * an integrator runs it: it follows a process's PoS events with an integration's credential,
 * acknowledges them, resumes after a restart without repeats, and goes on after a rotation once the
 * new credential is written over the old file. Skipped, saying why, where Go or nats.go is missing.
 */
const GoPath = '/usr/share/gocode';
const missing = await whyNoGo();
if (missing) {
  t.plan(0, `the Go example is skipped: it needs ${missing}`);
} else {
  await run();
}

async function whyNoGo(): Promise<string | undefined> {
  try {
    await promisify(execFile)('go', ['version']);
  } catch {
    return 'go on the PATH (apt-get install golang-go)';
  }
  const found = await access(path.join(GoPath, 'src/github.com/nats-io/nats.go/js.go')).then(() => true, () => false);
  return found ? undefined : `nats.go in ${GoPath} (apt-get install golang-github-nats-io-go-nats-dev)`;
}

async function run(): Promise<void> {
  const svc = await startTestService(t);
  const dir = await mkdtemp(path.join(tmpdir(), 'cp-go-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const binary = path.join(dir, 'follow-events');
  await promisify(execFile)('go', ['build', '-o', binary, path.join(projectRoot(), 'docs/examples/go-follow-events/main.go')], {
    env: { ...process.env, GOPATH: GoPath, GO111MODULE: 'off', GOCACHE: path.join(dir, 'cache') },
  });

  const owner = await svc.token(['projectsWrite']);
  const made = await svc.request('POST', `/${TestProject}/integrations`, { token: owner, body: { name: 'Go desk', kind: 'nats', filter: 'pos.>' } });
  if (made.status !== 201) throw new Error(made.text);
  const { consumer, filterSubject } = made.body.nats;
  const credsFile = path.join(dir, 'go-desk.creds');
  await writeFile(credsFile, made.body.creds, { mode: 0o600 });

  const follow = (t: Test) => {
    const child = spawn(binary, ['-creds', credsFile, '-consumer', consumer, '-filter', filterSubject], { env: { NATS_URL: svc.natsUrl }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
    t.teardown(() => {
      child.kill('SIGKILL');
    });
    const subjects = () => out.split('\n').filter((l) => l.startsWith('{')).map((l) => (JSON.parse(l) as { subject: string }).subject);
    return { child, exited, subjects, log: () => err };
  };
  const until = async (done: () => boolean, what: () => string, ms = 20_000) => {
    const deadline = Date.now() + ms;
    while (!done()) {
      if (Date.now() > deadline) throw new Error(what());
      await sleep(50);
    }
  };

  const fx = await seedCheckout(svc);
  const sale = async (t: Test) => {
    const res = await fx.createProcess();
    t.equal(res.status, 201);
    return res.body.id as string;
  };
  const pos = async (t: Test, id: string, state: string) => t.equal((await patchPos(svc, fx.tokens.pricing, id, { state })).status, 200, `PoS ${state}`);
  const subject = (id: string, event: string) => `events.${TestProject}.pos.${subjectToken(id)}.${event}`;

  t.test('follows, acknowledges and resumes after a restart without repeats', async (t) => {
    const first = follow(t);
    await until(() => first.log().includes(`following ${consumer}`), () => `it did not start: ${first.log()}`);
    const a = await sale(t);
    await pos(t, a, 'processing');
    await until(() => first.subjects().length >= 2, () => `two events expected: ${first.log()}`);
    t.same(first.subjects(), [subject(a, 'pending'), subject(a, 'processing')], 'each event of the process once, in order');
    first.child.kill('SIGTERM');
    t.equal(await first.exited, 0, 'SIGTERM drains and ends it');

    await pos(t, a, 'successful');
    const second = follow(t);
    await until(() => second.subjects().length >= 1, () => `the event of meanwhile expected: ${second.log()}`);
    await sleep(1000);
    t.same(second.subjects(), [subject(a, 'successful')], 'started again, it goes on after the last one it acknowledged');
    second.child.kill('SIGTERM');
    await second.exited;
  });

  t.test('a rotation revokes the credential; with the new one written over the file it goes on', async (t) => {
    const follower = follow(t);
    await until(() => follower.log().includes(`following ${consumer}`), () => `it did not start: ${follower.log()}`);
    const rotated = await svc.request('POST', `/${TestProject}/integrations/${made.body.id}/rotate`, { token: owner });
    t.equal(rotated.status, 200, rotated.text);
    await writeFile(credsFile, rotated.body.creds, { mode: 0o600 });
    await until(() => follower.log().includes('authentication revoked') || follower.log().includes('revoked'), () => `the revocation expected: ${follower.log()}`);
    await until(() => follower.log().includes('reconnected'), () => `a reconnect with the new credential expected: ${follower.log()}`);
    const b = await sale(t);
    await until(() => follower.subjects().includes(subject(b, 'pending')), () => `the next event expected: ${follower.log()}`);
    t.pass('it reads on with the rotated credential');
    follower.child.kill('SIGTERM');
    await follower.exited;
  });
}
