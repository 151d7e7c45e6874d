import { lookup as systemLookup } from 'node:dns';
import { Resolver } from 'node:dns/promises';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * Where the platform may send what outsiders asked it to (webhook URLs, a project's TSE address):
 * https only, to public addresses. With `allowPrivate` (WEBHOOK_ALLOW_PRIVATE_NETWORKS: tests,
 * on-premise setups) plain http and loopback or private addresses are allowed too. Never, whatever
 * the setting: link-local addresses (the cloud metadata address 169.254.169.254 among them),
 * unspecified ones (0.0.0.0, ::), multicast and broadcast. An IPv6 address that carries or reaches
 * an IPv4 address (IPv4-mapped, -compatible and -translated, NAT64, 6to4, Teredo) is judged by that
 * IPv4 address too. A name is checked by what it resolves to, when the URL is given and again when
 * each connection is made (the connection goes to an address that was checked, so a name that
 * resolves elsewhere in between reaches nothing it should not).
 *
 * Names are resolved by `resolve` (createResolver: DNS queries with a deadline of their own, off
 * libuv's threadpool, where getaddrinfo would wait beside the password hashing).
 */
export interface DestinationPolicy {
  allowPrivate: boolean;
  resolve: ResolveName;
}

/** A name's addresses (both families); rejects when the name does not resolve, or not in time. */
export type ResolveName = (hostname: string) => Promise<ResolvedAddress[]>;
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

const never = new BlockList();
never.addSubnet('0.0.0.0', 8, 'ipv4');
never.addSubnet('169.254.0.0', 16, 'ipv4');
never.addSubnet('224.0.0.0', 4, 'ipv4');
never.addAddress('255.255.255.255', 'ipv4');
never.addAddress('::', 'ipv6');
never.addSubnet('fe80::', 10, 'ipv6');
never.addSubnet('ff00::', 8, 'ipv6');
// AWS's metadata service on IPv6.
never.addAddress('fd00:ec2::254', 'ipv6');

/** Addresses no public receiver has: IANA's special-purpose ranges that are not globally reachable. */
const privateRanges = new BlockList();
for (const [net, prefix] of [
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['240.0.0.0', 4],
] as const) {
  privateRanges.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::1', 128],
  ['64:ff9b:1::', 48], // NAT64 for local use (RFC 8215)
  ['100::', 64], // discard-only
  ['2001:2::', 48], // benchmarking
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation (RFC 9637)
  ['5f00::', 16], // segment routing (SRv6) SIDs
  ['fc00::', 7], // unique local
  ['fec0::', 10], // site-local (deprecated, still routed inside some sites)
] as const) {
  privateRanges.addSubnet(net, prefix, 'ipv6');
}

/** Why an address may not be sent to, or undefined when it may. */
export function addressProblem(address: string, policy: Pick<DestinationPolicy, 'allowPrivate'>): string | undefined {
  // A zone (fe80::1%eth0) names a link: link-local, whatever the rest says.
  if (address.includes('%')) return `${address} is a link-local, unspecified, multicast or broadcast address`;
  const family = isIP(address);
  if (family === 0) return `${address} is not an IP address`;
  const embedded = family === 6 ? embeddedIPv4(address) : [];
  // Judged by the IPv4 address it carries where that is certain (the message names it); a local-use
  // NAT64 address, whose layout only its network knows, after the ranges (it is private itself).
  const reaches = (certain: boolean) => {
    for (const { ipv4, how } of embedded.filter((e) => e.how.startsWith('local-use') !== certain)) {
      const problem = addressProblem(ipv4, policy);
      if (problem) return `${address} reaches ${ipv4} (${how}): ${problem}`;
    }
    return undefined;
  };
  const kind = family === 6 ? 'ipv6' : 'ipv4';
  return (
    reaches(true) ??
    (never.check(address, kind) ? `${address} is a link-local, unspecified, multicast or broadcast address` : undefined) ??
    (!policy.allowPrivate && privateRanges.check(address, kind) ? `${address} is a loopback or private address (WEBHOOK_ALLOW_PRIVATE_NETWORKS allows it)` : undefined) ??
    reaches(false)
  );
}

/**
 * The IPv4 addresses an IPv6 address carries, each with how: the last 32 bits of an IPv4-mapped
 * (::ffff:0:0/96), IPv4-translated (::ffff:0:0:0/96), IPv4-compatible (::/96, but :: and ::1) or
 * NAT64 (64:ff9b::/96) address; every place RFC 6052 may put one in a local-use NAT64 address
 * (64:ff9b:1::/48, whose prefix length only its network knows); the 6to4 router (2002::/16, bits
 * 16-47); a Teredo server (bits 32-63) and client (the last 32 bits, inverted) of 2001::/32.
 */
export function embeddedIPv4(address: string): Array<{ ipv4: string; how: string }> {
  const w = ipv6Words(address);
  if (!w) return [];
  const zero = (from: number, to: number) => w.slice(from, to).every((x) => x === 0);
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  const last = v4(w[6]!, w[7]!);
  const found: Array<{ ipv4: string; how: string }> = [];
  if (zero(0, 5) && w[5] === 0xffff) found.push({ ipv4: last, how: 'IPv4-mapped' });
  if (zero(0, 4) && w[4] === 0xffff && w[5] === 0) found.push({ ipv4: last, how: 'IPv4-translated' });
  if (zero(0, 6) && !(w[6] === 0 && w[7]! <= 1)) found.push({ ipv4: last, how: 'IPv4-compatible' });
  if (w[0] === 0x64 && w[1] === 0xff9b && zero(2, 6)) found.push({ ipv4: last, how: 'NAT64' });
  if (w[0] === 0x64 && w[1] === 0xff9b && w[2] === 1) {
    const bytes = w.flatMap((x) => [x >> 8, x & 0xff]);
    for (const [prefix, at] of LocalNat64Layouts) found.push({ ipv4: at.map((i) => bytes[i]).join('.'), how: `local-use NAT64 /${prefix}` });
  }
  if (w[0] === 0x2002) found.push({ ipv4: v4(w[1]!, w[2]!), how: '6to4' });
  if (w[0] === 0x2001 && w[1] === 0) {
    found.push({ ipv4: v4(w[2]!, w[3]!), how: 'Teredo server' });
    found.push({ ipv4: v4(w[6]! ^ 0xffff, w[7]! ^ 0xffff), how: 'Teredo client' });
  }
  return found;
}

/** Where RFC 6052 (2.2) puts the IPv4 address behind a prefix of each length a /48 allows: byte 8 is skipped. */
const LocalNat64Layouts = [
  [48, [6, 7, 9, 10]],
  [56, [7, 9, 10, 11]],
  [64, [9, 10, 11, 12]],
  [96, [12, 13, 14, 15]],
] as const;

/** An IPv6 address as its eight 16-bit words (a dotted IPv4 tail read as two), or undefined when it is not one. */
function ipv6Words(address: string): number[] | undefined {
  if (isIP(address) !== 6) return undefined;
  let text = address.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string?];
  const words = (part: string | undefined) => (part ? part.split(':').map((x) => parseInt(x, 16)) : []);
  const before = words(head);
  const after = words(tail);
  const missing = 8 - before.length - after.length;
  return tail === undefined ? before : [...before, ...Array<number>(missing).fill(0), ...after];
}

/** Why a URL may not be sent to, judged by itself (scheme, a literal address), or undefined. */
export function urlProblem(url: URL, policy: Pick<DestinationPolicy, 'allowPrivate'>): string | undefined {
  if (url.protocol !== 'https:' && !(policy.allowPrivate && url.protocol === 'http:')) return `only https URLs${policy.allowPrivate ? ' (or http)' : ''} are allowed`;
  if (url.username || url.password) return 'a URL carries no user or password (the signature is the authentication)';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return isIP(host) ? addressProblem(host, policy) : undefined;
}

/** Why a URL may not be sent to, its name resolved: every address it resolves to must be allowed. */
export async function destinationProblem(url: URL, policy: DestinationPolicy): Promise<string | undefined> {
  const problem = urlProblem(url, policy);
  if (problem) return problem;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) return undefined;
  let addresses: ResolvedAddress[];
  try {
    addresses = await policy.resolve(host);
  } catch (err) {
    return err instanceof Error && err.message ? err.message : `${host} does not resolve`;
  }
  for (const { address } of addresses) {
    const refused = addressProblem(address, policy);
    if (refused) return `${host} resolves to ${refused}`;
  }
  return undefined;
}

/**
 * A `lookup` for net and tls connections that connects only to addresses the policy allows,
 * checked when each connection is made. A name is refused when any of its addresses is; else every
 * address is answered (with `all`, as net's Happy Eyeballs asks: each is tried in turn until one
 * answers).
 */
export function checkedLookup(policy: DestinationPolicy): LookupFunction {
  return (hostname, options, callback) => {
    const answer = callback as unknown as (err: NodeJS.ErrnoException | null, address: string | ResolvedAddress[], family?: number) => void;
    const refuse = (reason: string) => answer(Object.assign(new Error(`refused destination: ${reason}`), { code: 'EREFUSEDDESTINATION' }), '', 4);
    policy.resolve(hostname).then(
      (all) => {
        const refused = all.map(({ address }) => addressProblem(address, policy)).find(Boolean);
        if (refused) return refuse(refused);
        const family = options.family === 4 || options.family === 6 ? options.family : undefined;
        const addresses = family ? all.filter((a) => a.family === family) : all;
        if (!addresses.length) return refuse(`${hostname} resolves to nothing${family ? ` of IPv${family}` : ''}`);
        if (options.all) answer(null, addresses);
        else answer(null, addresses[0]!.address, addresses[0]!.family);
      },
      (err: unknown) => answer(Object.assign(err instanceof Error ? err : new Error(String(err)), { code: (err as NodeJS.ErrnoException).code ?? 'ENOTFOUND' }), '', 4),
    );
  };
}

export interface ResolverOptions {
  /** How long a name may take to resolve, all tries and servers together. */
  timeoutMs: number;
  /** Name servers (`host` or `host:port`); unset: the system's (/etc/resolv.conf). */
  servers?: readonly string[];
}

/**
 * Resolves names with DNS queries (c-ares, as node:dns's Resolver makes them), never with
 * getaddrinfo: getaddrinfo runs on libuv's threadpool, four threads by default, which the scrypt
 * hashes of sign-ins use too, so a name server that never answers, asked for four webhook names at
 * once, would hold up every sign-in for as long as the system resolver waits (5 s a try). Queries
 * for A and AAAA go side by side; the answer is what came within `timeoutMs` (one family that fails
 * is no failure while the other answers). Such queries read neither /etc/hosts nor the search
 * domains: `localhost` and names below it answer loopback (RFC 6761), others must be names DNS knows.
 */
export function createResolver(options: ResolverOptions): ResolveName {
  const perTry = Math.max(50, Math.floor(options.timeoutMs / 2));
  const resolver = new Resolver({ timeout: perTry, tries: 2 });
  if (options.servers?.length) resolver.setServers([...options.servers]);
  return async (hostname) => {
    const name = hostname.toLowerCase().replace(/\.$/, '');
    if (name === 'localhost' || name.endsWith('.localhost')) return [{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }];
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error(`${hostname} did not resolve within ${options.timeoutMs} ms`), { code: 'ETIMEOUT' })), options.timeoutMs);
    });
    try {
      const [v4, v6] = await Promise.race([Promise.allSettled([resolver.resolve4(name), resolver.resolve6(name)]), deadline]);
      const addresses = [
        ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 as const })) : []),
        ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 as const })) : []),
      ];
      if (addresses.length) return addresses;
      const reason = [v4, v6].find((r): r is PromiseRejectedResult => r.status === 'rejected')?.reason as NodeJS.ErrnoException | undefined;
      throw Object.assign(new Error(`${hostname} does not resolve${reason?.code ? ` (${reason.code})` : ''}`), { code: reason?.code ?? 'ENOTFOUND' });
    } finally {
      clearTimeout(timer);
    }
  };
}

/**
 * The system's resolution (getaddrinfo: /etc/hosts, the search domains an in-cluster name needs),
 * for the addresses the operator configured (FULFILLMENT_URL): a few names, looked up once per new
 * connection, never a tenant's.
 */
export const systemResolve: ResolveName = (hostname) =>
  new Promise((resolve, reject) =>
    systemLookup(hostname, { all: true }, (err, addresses) =>
      err ? reject(Object.assign(new Error(`${hostname} does not resolve (${err.code ?? err.message})`), { code: err.code })) : resolve(addresses.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }))),
    ),
  );
