import { readFile } from 'node:fs/promises';
import { connect, credsAuthenticator } from '@nats-io/transport-node';
import t from 'tap';
import { startTestService, TestProject } from './support/service.js';

/**
 * NATS over TLS (NATS_TLS_CA, NATS_TLS_CERT, NATS_TLS_KEY): the file's nats-server serves TLS only,
 * with a certificate of a CA of its own; the service trusts that CA and works as ever, and a client
 * that does not trust it is refused before any credential is sent.
 */
const svc = await startTestService(t, { natsTls: true });
const tls = svc.infra.tls!;

t.test('the service talks to a TLS-only NATS when NATS_TLS_CA names its CA', async (t) => {
  t.equal(svc.config.nats.tls?.caFile, tls.caFile);
  const token = await svc.token(['shopsRead', 'shopsWrite']);
  const created = await svc.request('POST', `/${TestProject}/shops`, { token, body: { id: 'tls', name: 'Verschlüsselt' } });
  t.equal(created.status, 201, created.text);
  const read = await svc.request('GET', `/${TestProject}/shops/tls`, { token });
  t.equal(read.body.name, 'Verschlüsselt');
  t.ok(svc.nc.info?.tls_required, 'the server asks for TLS');
});

t.test('a client that does not trust the CA is refused, even with good credentials', async (t) => {
  const creds = credsAuthenticator(await readFile(svc.infra.natsAuth.creds.admin));
  const untrusting = await connect({ servers: svc.natsUrl, authenticator: creds, maxReconnectAttempts: 0 }).then(
    async (nc) => {
      await nc.close();
      return 'connected';
    },
    (err: unknown) => String(err),
  );
  t.not(untrusting, 'connected');
  t.match(untrusting, /certificate|self.signed|TLS|unable to verify/i);
});
