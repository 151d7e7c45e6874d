import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface TlsFiles {
  /** The CA that signed the server's certificate (what clients trust: NATS_TLS_CA). */
  caFile: string;
  certFile: string;
  keyFile: string;
}

/**
 * A CA and a certificate it signed for 127.0.0.1 and localhost (EC P-256, one day), made with
 * openssl into `dir`: what a nats-server serving TLS on loopback needs, for the tests and the bench.
 */
export async function makeTlsFiles(dir: string): Promise<TlsFiles> {
  const file = (name: string) => path.join(dir, name);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await run('openssl', ['req', '-x509', ...ec, '-keyout', file('ca.key'), '-out', file('ca.pem'), '-days', '1', '-subj', '/CN=checkout-platform test CA']);
  await run('openssl', ['req', ...ec, '-keyout', file('server.key'), '-out', file('server.csr'), '-subj', '/CN=127.0.0.1']);
  await writeFile(file('server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  await run('openssl', ['x509', '-req', '-in', file('server.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial', '-out', file('server.pem'), '-days', '1', '-extfile', file('server.ext')]);
  return { caFile: file('ca.pem'), certFile: file('server.pem'), keyFile: file('server.key') };
}
