import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { projectRoot } from '../src/infra/project-root.js';
import { TestSecretsKey } from './support/service.js';

/**
 * `npm run nats-auth` (docs/operations.md, "The message plane"): the first run makes the trust's
 * files, each readable by its owner only; a second run keeps every key and every credential, so
 * that the processes and tools already given a .creds file keep working.
 */
const run = promisify(execFile);
const nodeArgs = (dir: string) => [path.join(projectRoot(), 'dist/scripts/nats-auth.js'), '--dir', dir];
const env = { PATH: process.env.PATH, HOME: process.env.HOME, SECRETS_KEY: TestSecretsKey };

async function files(dir: string): Promise<Map<string, string>> {
  const names = (await readdir(dir)).sort();
  return new Map(await Promise.all(names.map(async (name): Promise<[string, string]> => [name, await readFile(path.join(dir, name), 'utf8')])));
}

t.test('a second run keeps every key and credential; every file is its owner\'s only', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'nats-auth-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const first = await run(process.execPath, nodeArgs(dir), { env });
  t.match(first.stderr, /made the operator and accounts/);
  const made = await files(dir);
  t.same([...made.keys()], ['admin.creds', 'authority.json', 'edge.creds', 'issuer.json', 'nats-server.conf', 'service.creds', 'workers.creds']);
  for (const name of made.keys()) t.equal((await stat(path.join(dir, name))).mode & 0o777, 0o600, `${name}: 0600`);

  // The workers' part: the signing keys and the system user, never an identity key.
  const authority = JSON.parse(made.get('authority.json')!);
  const issuer = JSON.parse(made.get('issuer.json')!);
  t.same(Object.keys(issuer.operator).sort(), ['jwt', 'publicKey', 'signingSeed'], 'issuer.json: the operator without its identity seed');
  t.same(Object.keys(issuer.system).sort(), ['jwt', 'publicKey', 'user'], 'the system account without its seeds, with its user');
  t.same(Object.keys(issuer.account).sort(), ['jwt', 'publicKey', 'signingKey', 'signingSeed'], 'the account without its identity seed');
  t.match(issuer.account.signingSeed, /^sealed:v1:/, 'sealed');
  const sealedValues = (value: unknown): string[] => (typeof value === 'string' ? (value.startsWith('sealed:') ? [value] : []) : value && typeof value === 'object' ? Object.values(value).flatMap(sealedValues) : []);
  const identitySeeds = [authority.operator.seed, authority.system.seed, authority.account.seed];
  t.equal(identitySeeds.length, 3);
  t.notOk(sealedValues(issuer).some((v) => identitySeeds.includes(v)), 'none of the identity seeds is in it');
  t.equal(sealedValues(issuer).length, 3, 'three sealed seeds: the two signing keys and the system user');

  const second = await run(process.execPath, nodeArgs(dir), { env });
  t.match(second.stderr, /kept the operator and accounts/);
  const kept = await files(dir);
  for (const [name, text] of made) t.equal(kept.get(name), text, `${name}: unchanged`);
});
