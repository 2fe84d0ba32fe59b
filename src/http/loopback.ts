import net from 'node:net';

/** True for names and addresses that can only reach this machine. */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/^\[|\]$/g, '');
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (net.isIPv4(h)) return h.startsWith('127.');
  if (net.isIPv6(h)) return h === '::1' || h.startsWith('::ffff:127.');
  return false;
}

/** Splits a Host header value into its hostname, accepting `[v6]:port`, `name:port` and bare names. */
export function hostnameOf(hostHeader: string): string {
  const v = hostHeader.trim();
  if (v.startsWith('[')) {
    const end = v.indexOf(']');
    return end > 0 ? v.slice(1, end) : v;
  }
  const colon = v.lastIndexOf(':');
  return colon >= 0 && v.indexOf(':') === colon ? v.slice(0, colon) : v;
}
