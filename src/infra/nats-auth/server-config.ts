import type { StoredAuthority } from './authority-file.js';

/**
 * What a nats-server needs to trust the platform's users (authority-file.ts), as configuration
 * text: the operator (its JWT inline), the system account, and the `full` resolver, which keeps the
 * account JWTs in a folder of its own, takes newer ones at run time (the workers push revocations
 * and the integrations' accounts) and passes them to the other nodes of a cluster.
 * `resolver_preload` gives a new server the platform's and the edges' accounts as generated; a
 * server that holds a newer account JWT keeps it.
 *
 * Optionally a cluster block whose routes authenticate (a node without the route credentials is
 * refused) and TLS for clients.
 */
export interface ServerConfigOptions {
  /** The resolver's folder (one per node). */
  resolverDir: string;
  server?: { name: string };
  cluster?: { name: string; listen: string; routes: string[]; user: string; password: string };
  tls?: { certFile: string; keyFile: string; caFile?: string };
}

export function natsServerConfig(authority: StoredAuthority, options: ServerConfigOptions): string {
  const quote = (s: string) => JSON.stringify(s);
  const lines = [
    '# The platform\'s NATS trust (npm run nats-auth): no connection without a user of its operator.',
    ...(options.server ? [`server_name: ${quote(options.server.name)}`] : []),
    `operator: ${quote(authority.operator.jwt)}`,
    `system_account: ${authority.system.publicKey}`,
    'resolver: {',
    '  type: full',
    `  dir: ${quote(options.resolverDir)}`,
    '  allow_delete: false',
    // A node that missed an update (it was down) asks the others within this time.
    '  interval: "30s"',
    '  timeout: "2s"',
    '}',
    'resolver_preload: {',
    `  ${authority.system.publicKey}: ${quote(authority.system.jwt)}`,
    `  ${authority.account.publicKey}: ${quote(authority.account.jwt)}`,
    `  ${authority.edgeAccount.publicKey}: ${quote(authority.edgeAccount.jwt)}`,
    '}',
  ];
  if (options.cluster) {
    const { name, listen, routes, user, password } = options.cluster;
    lines.push(
      'cluster {',
      `  name: ${quote(name)}`,
      `  listen: ${quote(listen)}`,
      // Routes authenticate both ways: a node must know these to join.
      `  authorization { user: ${quote(user)}, password: ${quote(password)}, timeout: 2 }`,
      `  routes: [${routes.map(quote).join(', ')}]`,
      '}',
    );
  }
  if (options.tls) {
    const { certFile, keyFile, caFile } = options.tls;
    lines.push('tls {', `  cert_file: ${quote(certFile)}`, `  key_file: ${quote(keyFile)}`, ...(caFile ? [`  ca_file: ${quote(caFile)}`] : []), '}');
  }
  return `${lines.join('\n')}\n`;
}
