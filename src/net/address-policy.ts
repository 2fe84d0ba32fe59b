import net, { type LookupFunction } from 'node:net';
import { InvalidInput } from '../errors.js';

/**
 * The addresses no server-side fetch made on a request's behalf may connect to: link-local (where clouds answer
 * instance metadata and credentials) and the metadata addresses outside it. Loopback and LAN stay allowed on purpose:
 * a desktop user downloads from their NAS or another local tool (docs/media.md).
 */
const V4_RULES: readonly [string, number][] = [
  ['169.254.0.0', 16], // link-local: AWS, GCP, Azure, Oracle, DigitalOcean... metadata at 169.254.169.254
  ['100.100.100.200', 32], // Alibaba Cloud metadata
];
const V6_RULES: readonly [string, number][] = [
  ['fe80::', 10], // link-local
  ['fd00:ec2::254', 128], // AWS metadata over IPv6
];
/**
 * IPv6 forms that carry an IPv4 address a connection may end up at: IPv4-mapped (::ffff:a.b.c.d), IPv4-translated
 * (::ffff:0:a.b.c.d), IPv4-compatible (::a.b.c.d) and the NAT64 well-known prefix (64:ff9b::a.b.c.d). Each gets
 * the IPv4 rules under its /96.
 */
const V4_IN_V6_PREFIXES = ['::ffff:', '::ffff:0:', '::', '64:ff9b::'];

const forbidden = new net.BlockList();
for (const [address, bits] of V4_RULES) {
  forbidden.addSubnet(address, bits, 'ipv4');
  for (const prefix of V4_IN_V6_PREFIXES) forbidden.addSubnet(prefix + address, 96 + bits, 'ipv6');
}
for (const [address, bits] of V6_RULES) forbidden.addSubnet(address, bits, 'ipv6');

/** True for an IP address (either family, any spelling Node parses, a zone id allowed) the policy refuses. */
export function isForbiddenAddress(address: string): boolean {
  const bare = address.replace(/%.*$/, '');
  const family = net.isIP(bare);
  return family !== 0 && forbidden.check(bare, family === 6 ? 'ipv6' : 'ipv4');
}

/** The 400 every refused fetch answers with, naming what was asked for and the address it came to. */
export const forbiddenAddress = (host: string, address: string) =>
  new InvalidInput(
    `${host} is ${host === address ? '' : `at ${address}, `}a link-local or cloud metadata address; the service does not fetch from it`,
    { host, address },
    'forbidden_address',
  );

/**
 * Refuses a URL whose host is a forbidden IP literal, before any connection (a connection to an IP skips the
 * look-up, so this is where literals are checked). The WHATWG parser has already turned decimal, octal, hex and
 * short IPv4 spellings into dotted form and IPv6 into its canonical text. A name passes: it is checked when the
 * connection resolves it (guardLookup).
 */
export function refuseForbiddenHost(url: URL): void {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isForbiddenAddress(host)) throw forbiddenAddress(host, host);
}

/**
 * Wraps a look-up so that a connection never opens to a forbidden address: the check runs on the answers the
 * connection itself is about to use, so a name that resolves there, or that resolves elsewhere first and there at
 * connect time (DNS rebinding), is refused. One forbidden answer refuses the name: the connection may try each.
 */
export function guardLookup(lookup: LookupFunction): LookupFunction {
  return (hostname, options, callback) =>
    lookup(hostname, options, (err, address, family) => {
      if (err) return callback(err, address, family);
      const answers = typeof address === 'string' ? [address] : address.map((a) => a.address);
      const bad = answers.find(isForbiddenAddress);
      if (bad !== undefined) return callback(forbiddenAddress(hostname, bad), address, family);
      callback(null, address, family);
    });
}
