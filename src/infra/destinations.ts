import { lookup } from 'node:dns/promises';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * Where the platform may send what outsiders asked it to (webhook URLs): https only, to public
 * addresses. With `allowPrivate` (WEBHOOK_ALLOW_PRIVATE_NETWORKS: tests, on-premise setups) plain
 * http and loopback or private addresses are allowed too. Never, whatever the setting: link-local
 * addresses (the cloud metadata address 169.254.169.254 among them), unspecified ones (0.0.0.0, ::),
 * multicast and broadcast. A name is checked by what it resolves to, when the URL is given and
 * again when each request connects (the connection goes to the address that was checked, so a name
 * that resolves elsewhere in between reaches nothing it should not).
 */
export interface DestinationPolicy {
  allowPrivate: boolean;
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

const privateRanges = new BlockList();
for (const [net, prefix] of [
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['240.0.0.0', 4],
] as const) {
  privateRanges.addSubnet(net, prefix, 'ipv4');
}
privateRanges.addAddress('::1', 'ipv6');
privateRanges.addSubnet('fc00::', 7, 'ipv6');

/** Why an address may not be sent to, or undefined when it may. */
export function addressProblem(address: string, policy: DestinationPolicy): string | undefined {
  const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
  // An IPv4 address written as IPv6 (::ffff:a.b.c.d) is judged as the IPv4 address it is.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return addressProblem(mapped, policy);
  if (never.check(address, family)) return `${address} is a link-local, unspecified, multicast or broadcast address`;
  if (!policy.allowPrivate && privateRanges.check(address, family)) return `${address} is a loopback or private address (WEBHOOK_ALLOW_PRIVATE_NETWORKS allows it)`;
  return undefined;
}

/** Why a URL may not be sent to, judged by itself (scheme, a literal address), or undefined. */
export function urlProblem(url: URL, policy: DestinationPolicy): string | undefined {
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
  let addresses: Array<{ address: string }>;
  try {
    addresses = await lookup(host, { all: true });
  } catch {
    return `${host} does not resolve`;
  }
  for (const { address } of addresses) {
    const refused = addressProblem(address, policy);
    if (refused) return `${host} resolves to ${refused}`;
  }
  return undefined;
}

/** A `lookup` for node:http(s) that connects only to addresses the policy allows (checked at connect time). */
export function checkedLookup(policy: DestinationPolicy): LookupFunction {
  return (hostname, options, callback) => {
    lookup(hostname, { all: true, family: options.family === 6 ? 6 : options.family === 4 ? 4 : 0 }).then(
      (addresses) => {
        // Refused when any address of the name is: the one connected to is the first.
        const refused = addresses.map(({ address }) => addressProblem(address, policy)).find(Boolean);
        const allowed = addresses[0];
        if (refused || !allowed) {
          callback(Object.assign(new Error(`refused destination: ${refused ?? `${hostname} resolves to nothing`}`), { code: 'EREFUSEDDESTINATION' }), '', 4);
          return;
        }
        if (options.all) (callback as unknown as (err: null, addresses: Array<{ address: string; family: number }>) => void)(null, [{ address: allowed.address, family: allowed.family }]);
        else callback(null, allowed.address, allowed.family);
      },
      (err: unknown) => callback(err as NodeJS.ErrnoException, '', 4),
    );
  };
}
