import type { Request } from 'express';
import ipaddr from 'ipaddr.js';

/**
 * The client IP for rate limits: the socket peer, or with TRUST_PROXY the right-most
 * X-Forwarded-For hop (the one our own proxy appended), never a client-chosen left-most value.
 */
export function clientIp(req: Request, trustProxy: boolean): string {
  const socketIp = req.socket.remoteAddress ?? 'unknown';
  if (!trustProxy) return socketIp;
  const xff = req.headers['x-forwarded-for'];
  const header = Array.isArray(xff) ? xff.join(',') : xff;
  if (!header) return socketIp;
  const hops = header
    .split(',')
    .map((h) => h.trim())
    .filter(Boolean);
  return hops[hops.length - 1] ?? socketIp;
}

/**
 * The network a per-IP budget counts (contract section 10): an IPv4 address as it is, an IPv6
 * address by its /64, since one subscriber or one host holds a whole /64 and would otherwise get a
 * fresh budget per address. IPv4-mapped IPv6 (`::ffff:203.0.113.7`, what a dual-stack socket
 * reports) is the IPv4 address it maps.
 */
export function clientNetwork(req: Request, trustProxy: boolean): string {
  // Read by the per-network budget and again by the route's own budgets: parsed once per request.
  const parsed = trustProxy ? networksBehindProxy : networksOfPeers;
  let network = parsed.get(req);
  if (network === undefined) {
    network = networkOf(clientIp(req, trustProxy));
    parsed.set(req, network);
  }
  return network;
}

const networksOfPeers = new WeakMap<Request, string>();
const networksBehindProxy = new WeakMap<Request, string>();

export function networkOf(ip: string): string {
  if (!ipaddr.isValid(ip)) return ip;
  const addr = ipaddr.process(ip);
  if (addr.kind() === 'ipv4') return addr.toString();
  const parts = (addr as ipaddr.IPv6).parts.slice(0, 4);
  return `${new ipaddr.IPv6([...parts, 0, 0, 0, 0]).toRFC5952String()}/64`;
}
