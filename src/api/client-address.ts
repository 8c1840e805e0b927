import type { IncomingMessage } from 'node:http';
import net from 'node:net';

/**
 * Where a request or socket comes from, as the per-address limits key it: the peer's
 * IPv4 address, or the /64 network of an IPv6 one (one host usually holds a whole
 * /64, so single IPv6 addresses would be free for the asking).
 */
export function addressKey(remoteAddress: string | undefined): string {
  if (!remoteAddress) return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(remoteAddress);
  if (mapped) return mapped[1]!;
  if (!net.isIPv6(remoteAddress)) return remoteAddress;
  return `${expandIPv6(remoteAddress).slice(0, 4).join(':')}::/64`;
}

/** The eight groups of an IPv6 address ("::" filled in, zone dropped), lower case without leading zeros. */
function expandIPv6(address: string): string[] {
  const [head = '', tail] = address.split('%')[0]!.toLowerCase().split('::') as [string, string | undefined];
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return groups.map((g) => (g.includes('.') ? g : String(parseInt(g, 16).toString(16))));
}

export const requestAddressKey = (req: IncomingMessage): string => addressKey(req.socket.remoteAddress);

const isLoopbackAddress = (address: string | undefined): boolean =>
  address !== undefined && (address === '::1' || /^(::ffff:)?127\./i.test(address));

/**
 * A client on this machine talking to the process directly. A request that carries
 * proxy headers came through a proxy (which may sit on this machine and forward anyone),
 * so it does not count.
 */
export function isLoopbackRequest(req: IncomingMessage): boolean {
  const headers = req.headers;
  if (headers['x-forwarded-for'] !== undefined || headers.forwarded !== undefined || headers['x-real-ip'] !== undefined) return false;
  return isLoopbackAddress(req.socket.remoteAddress);
}
