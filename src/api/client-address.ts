import type { IncomingMessage } from 'node:http';
import net from 'node:net';
import { proxyRange } from '../config';

/**
 * Where a request or socket comes from, as the per-address limits key it: the peer's
 * IPv4 address, or the /64 network of an IPv6 one (one host usually holds a whole
 * /64, so single IPv6 addresses would be free for the asking).
 */
export function addressKey(remoteAddress: string | undefined): string {
  if (!remoteAddress) return 'unknown';
  const address = unmapped(remoteAddress);
  if (!net.isIPv6(address)) return address;
  return `${expandIPv6(address).slice(0, 4).join(':')}::/64`;
}

/** The eight groups of an IPv6 address ("::" filled in, zone dropped), lower case without leading zeros. */
function expandIPv6(address: string): string[] {
  const [head = '', tail] = address.split('%')[0]!.toLowerCase().split('::') as [string, string | undefined];
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return groups.map((g) => (g.includes('.') ? g : String(parseInt(g, 16).toString(16))));
}

/** Most X-Forwarded-For entries read from the right (a chain of proxies is a few hops long). */
const MAX_FORWARDED_HOPS = 16;

/**
 * Who a request comes from. Directly connected, the peer. Through a trusted reverse
 * proxy (`TRUSTED_PROXIES`), the client its `X-Forwarded-For` names: read from the
 * right, the first address that is not a trusted proxy itself. Only the right end can
 * be believed — each proxy appends the peer it saw, and a client may put anything to
 * the left — so a client that names someone else in the header gains nothing. Without
 * this, every client behind a proxy shares the proxy's address and its per-address
 * limits: one of them at the anonymous rate would refuse everyone.
 */
export class ClientAddresses {
  private readonly trusted = new net.BlockList();
  private readonly trustsAnyone: boolean;

  constructor(trustedProxies: readonly string[]) {
    for (const entry of trustedProxies) {
      const range = proxyRange(entry);
      if (!range) throw new Error(`not an address or CIDR range: ${entry}`);
      if (range.prefix === undefined) this.trusted.addAddress(range.address, range.family);
      else this.trusted.addSubnet(range.address, range.prefix, range.family);
    }
    this.trustsAnyone = trustedProxies.length > 0;
  }

  /** A connection from a trusted proxy carries many clients: per-address caps on connections do not apply to it. */
  isTrustedProxy(remoteAddress: string | undefined): boolean {
    if (!this.trustsAnyone || remoteAddress === undefined) return false;
    const address = unmapped(remoteAddress);
    return this.trusted.check(address, net.isIPv6(address) ? 'ipv6' : 'ipv4');
  }

  /** The client's address: the peer, or through trusted proxies the one `X-Forwarded-For` names. */
  addressOf(req: IncomingMessage): string | undefined {
    let client = req.socket.remoteAddress;
    if (!this.isTrustedProxy(client)) return client;
    const header = req.headers['x-forwarded-for'];
    // Node joins repeated X-Forwarded-For headers with ", " in arrival order.
    const hops = (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',');
    for (let i = hops.length - 1; i >= Math.max(0, hops.length - MAX_FORWARDED_HOPS); i--) {
      const hop = plainAddress(hops[i]!.trim());
      // What a trusted proxy cannot have written (it appends the peer it saw) ends the walk at that proxy.
      if (hop === undefined) return client;
      client = hop;
      if (!this.isTrustedProxy(client)) return client;
    }
    return client;
  }

  /** The per-address limits' key for a request (see addressKey). */
  keyOf(req: IncomingMessage): string {
    return addressKey(this.addressOf(req));
  }
}

/** "::ffff:10.1.2.3" as "10.1.2.3", so that IPv4 ranges match it. */
function unmapped(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? mapped[1]! : address;
}

/** An X-Forwarded-For entry's address, without a port ("1.2.3.4:80", "[::1]:80") some proxies add; undefined when it is none. */
function plainAddress(entry: string): string | undefined {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(entry);
  const withPort = /^(\d+\.\d+\.\d+\.\d+):\d+$/.exec(entry);
  const address = bracketed?.[1] ?? withPort?.[1] ?? entry;
  return net.isIP(address) === 0 ? undefined : address;
}

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

/** localhost (or a name under it), 127.x.x.x or [::1], with or without a port. */
const LOOPBACK_HOST = /^(?:localhost|[a-z0-9-]+(?:\.[a-z0-9-]+)*\.localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d{1,5})?$/i;

/**
 * A client on this machine that asked for this machine by a loopback name: a loopback
 * request (above) whose Host is localhost, 127.x.x.x or [::1]. What only this machine
 * may read (the development token, the operator endpoints under OPS_ENDPOINTS=loopback)
 * needs both: a page of another site whose name was re-pointed at 127.0.0.1 (DNS
 * rebinding) reaches the process from loopback, but its requests carry that site's name
 * as their Host.
 */
export function isLocalRequest(req: IncomingMessage): boolean {
  return isLoopbackRequest(req) && LOOPBACK_HOST.test(req.headers.host ?? '');
}
