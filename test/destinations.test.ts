import { scrypt } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import t from 'tap';
import { addressProblem, createResolver, embeddedIPv4 } from '../src/infra/destinations.js';
import { createSender } from '../actors/webhooks/sender.js';
import { p } from './support/checkout.js';
import { startDnsStandIn } from './support/dns-stand-in.js';
import { startTestService } from './support/service.js';

/**
 * Where webhooks may lead (src/infra/destinations.ts): the addresses refused, IPv4 addresses in IPv6
 * clothing among them, at creation over HTTP and when a delivery connects; and name resolution
 * with a deadline of its own, off the threadpool that hashes passwords.
 */
const strict = { allowPrivate: false };
const open = { allowPrivate: true };

t.test('an IPv6 address that carries or reaches a refused IPv4 address is refused as that address', async (t) => {
  for (const [address, reaches, how] of [
    ['64:ff9b::7f00:1', '127.0.0.1', 'NAT64'],
    ['64:ff9b::a9fe:a9fe', '169.254.169.254', 'NAT64'],
    ['::ffff:0:7f00:1', '127.0.0.1', 'IPv4-translated'],
    ['::ffff:7f00:1', '127.0.0.1', 'IPv4-mapped'],
    ['::ffff:10.1.2.3', '10.1.2.3', 'IPv4-mapped'],
    ['::7f00:1', '127.0.0.1', 'IPv4-compatible'],
    ['::169.254.169.254', '169.254.169.254', 'IPv4-compatible'],
    ['2002:7f00:1::', '127.0.0.1', '6to4'],
    ['2002:a9fe:a9fe:1::1', '169.254.169.254', '6to4'],
    ['2001:0:7f00:1::1', '127.0.0.1', 'Teredo server'],
    ['2001:0:808:808:0:0:80ff:fffe', '127.0.0.1', 'Teredo client'],
  ] as const) {
    t.ok(embeddedIPv4(address).some((e) => e.ipv4 === reaches && e.how === how), `${address} carries ${reaches} (${how})`);
    t.match(addressProblem(address, strict), new RegExp(`${reaches.replace(/\./g, '\\.')}`), `${address} refused`);
  }
  // Link-local stays refused with private networks allowed, whichever clothing it wears.
  for (const address of ['64:ff9b::a9fe:a9fe', '::ffff:0:a9fe:a9fe', '2002:a9fe:a9fe::', '2001:0:a9fe:a9fe::1', '64:ff9b:1:a9fe:a9:fe00::', '::a9fe:a9fe']) {
    t.match(addressProblem(address, open), /169\.254\.169\.254.*link-local/, `${address}: refused even where private networks are allowed`);
  }
  t.match(addressProblem('64:ff9b:1::7f00:1', strict), /loopback or private/, 'local-use NAT64 (64:ff9b:1::/48) is private');
  t.match(addressProblem('fec0::1', strict), /loopback or private/, 'site-local is private');
  t.match(addressProblem('fe80::1%eth0', open), /link-local/, 'an address with a zone names a link');
  t.equal(addressProblem('::1', open), undefined, 'loopback where private networks are allowed');
  t.match(addressProblem('::1', strict), /loopback/);
});

t.test('public addresses pass, also when they travel in IPv6 clothing', async (t) => {
  for (const address of ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c', '64:ff9b::5db8:d70e', '2002:5db8:d70e::1', '::ffff:93.184.215.14', '2001:0:5db8:d70e:0:0:a247:28f1']) {
    t.equal(addressProblem(address, strict), undefined, address);
  }
});

t.test('a name server that never answers: the name fails within its deadline, and password hashing does not wait for it', async (t) => {
  const dns = await startDnsStandIn(t, { 'never.example': 'silent' });
  const resolve = createResolver({ timeoutMs: 1500, servers: [dns.server] });
  const started = Date.now();
  // More names than libuv has threads: getaddrinfo would have taken all four for as long as it waits.
  let settled = 0;
  const lookups = Array.from({ length: 8 }, () => resolve('never.example').then(() => 'resolved', (err: Error) => err.message).finally(() => settled++));
  await new Promise<Buffer>((resolve, reject) => scrypt('a password', 'salt', 64, { N: 16_384 }, (err, key) => (err ? reject(err) : resolve(key))));
  t.equal(settled, 0, `scrypt finished (${Date.now() - started} ms) while every name still waited for its answer`);
  for (const message of await Promise.all(lookups)) t.match(message, /never\.example did not resolve within 1500 ms/);
  const took = Date.now() - started;
  t.ok(took >= 1450 && took < 4000, `each failed at its deadline (${took} ms)`);
  t.ok(dns.asked('never.example') > 0, 'the queries went to the name server given');
});

t.test('the names resolve both families, and localhost answers loopback without a query', async (t) => {
  const dns = await startDnsStandIn(t, { 'both.example': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'], 'none.example': [] });
  const resolve = createResolver({ timeoutMs: 1000, servers: [dns.server] });
  t.same((await resolve('both.example')).map((a) => a.address).sort(), ['2606:2800:21f:cb07:6820:80da:af6b:8b2c', '93.184.215.14']);
  await t.rejects(resolve('none.example'), /none\.example does not resolve/);
  t.same(await resolve('localhost'), [{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }]);
  t.equal(dns.asked('localhost'), 0);
});

t.test('a delivery to a name that resolves to a refused address in IPv6 clothing is refused when it connects', async (t) => {
  const dns = await startDnsStandIn(t, { 'nat64.example': ['64:ff9b::7f00:1'], 'mixed.example': ['93.184.215.14', '2002:7f00:1::'] });
  // Something listens on loopback, as an internal service would: it must not be reached.
  let reached = 0;
  const internal = createServer((socket) => {
    reached++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => internal.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => internal.close(() => resolve())));
  const port = (internal.address() as AddressInfo).port;
  const sender = createSender({ allowPrivate: false, resolve: createResolver({ timeoutMs: 1000, servers: [dns.server] }) }, 4);
  t.teardown(() => sender.close());
  const headers = { 'content-type': 'application/json' };
  t.match(await sender.send(`https://nat64.example:${port}/`, headers, '{}', 2000), { status: 'connection_failed', response: /refused destination: 64:ff9b::7f00:1 reaches 127\.0\.0\.1 \(NAT64\)/ });
  t.match(await sender.send(`https://mixed.example:${port}/`, headers, '{}', 2000), { status: 'connection_failed', response: /refused destination: 2002:7f00:1:: reaches 127\.0\.0\.1 \(6to4\)/ }, 'one refused address among public ones refuses the name');
  t.match(await sender.send(`https://[::ffff:0:7f00:1]:${port}/`, headers, '{}', 2000), { status: 'connection_failed', response: /reaches 127\.0\.0\.1 \(IPv4-translated\)/ });
  t.equal(reached, 0, 'nothing connected');
});

t.test('over HTTP: a webhook to loopback in IPv6 clothing is refused with 400 at its url, by address or by the name it resolves to', async (t) => {
  const dns = await startDnsStandIn(t, { 'nat64.example': ['64:ff9b::7f00:1'], 'slow.example': 'silent' });
  const svc = await startTestService(t, { env: { WEBHOOK_DNS_SERVERS: dns.server, WEBHOOK_DNS_TIMEOUT_MS: '300' } });
  const owner = await svc.token(['projectsWrite']);
  const post = (url: string) => svc.request('POST', `${p}/integrations`, { token: owner, body: { name: 'hook', kind: 'webhook', url } });
  for (const [url, why] of [
    ['https://[64:ff9b::7f00:1]/', /64:ff9b::7f00:1 reaches 127\.0\.0\.1 \(NAT64\)/],
    ['https://[::ffff:0:7f00:1]/', /reaches 127\.0\.0\.1 \(IPv4-translated\)/],
    ['https://[2002:7f00:1::]/', /2002:7f00:1:: reaches 127\.0\.0\.1 \(6to4\)/],
    ['https://[64:ff9b:1::a9fe:a9fe]/', /private/],
    ['https://[fec0::1]/', /private/],
    ['https://[2001:0:7f00:1::]/', /Teredo/],
    ['https://nat64.example/', /nat64\.example resolves to 64:ff9b::7f00:1 reaches 127\.0\.0\.1/],
  ] as const) {
    const res = await post(url);
    t.equal(res.status, 400, url);
    t.match(res.body, { type: 'bad_request', details: [{ path: 'url', message: why }] }, `${url}: why, at url`);
  }
  const started = Date.now();
  const slow = await post('https://slow.example/');
  t.equal(slow.status, 400);
  t.match(slow.body.details[0].message, /slow\.example did not resolve within 300 ms/);
  t.ok(Date.now() - started < 2000, 'answered at the resolver\'s deadline, not the system\'s');
  const count = await svc.sql<{ n: number }[]>`select count(*)::int as n from integrations`;
  t.equal(count[0]!.n, 0, 'nothing was made');
});
