import type { Request } from 'express';
import { isIPv4, isIPv6 } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * The client IP for rate limits: the socket peer, or behind `trustedHops` proxies (TRUST_PROXY_HOPS,
 * contract section 10) the X-Forwarded-For entry that many hops from the right. Each trusted proxy
 * appends the address it was reached from, so the right-most `trustedHops` entries are ours and the
 * last of them names the client; anything further left was chosen by the client and is never used.
 * A header shorter than that (a request that bypassed a proxy) counts as its left-most entry, the
 * closest thing to the client that a proxy of ours wrote. 0 trusts none.
 */
export function clientIp(req: Request, trustedHops: number): string {
  const socketIp = req.socket.remoteAddress ?? 'unknown';
  if (trustedHops < 1) return socketIp;
  const xff = req.headers['x-forwarded-for'];
  const header = Array.isArray(xff) ? xff.join(',') : xff;
  if (!header) return socketIp;
  const hops = header
    .split(',')
    .map((h) => h.trim())
    .filter(Boolean);
  const client = hops[Math.max(0, hops.length - trustedHops)];
  return client === undefined ? socketIp : hopAddress(client);
}

/**
 * Some proxies append the client's port to its address (`203.0.113.7:51234`,
 * `[2001:db8::1]:443`): used verbatim, every connection of one client would be a fresh budget
 * subject (contract section 10), so the port and the brackets are dropped.
 */
export function hopAddress(hop: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(hop);
  if (bracketed?.[1]) return bracketed[1];
  const v4WithPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(hop);
  if (v4WithPort?.[1]) return v4WithPort[1];
  return hop;
}

/** A per-network budget's subject at one level of the hierarchy, finest first. */
export interface NetworkTier {
  /** `ipv4-32` and `ipv6-64` are a client's own network; the others are coarse. */
  readonly tier: 'ipv4-32' | 'ipv4-24' | 'ipv6-64' | 'ipv6-56' | 'ipv6-48' | 'other';
  readonly network: string;
}

/**
 * The network a per-IP budget counts (contract section 10): an IPv4 address as it is, an IPv6
 * address by its /64, since one subscriber or one host holds a whole /64 and would otherwise get a
 * fresh budget per address. IPv4-mapped IPv6 (`::ffff:203.0.113.7`, what a dual-stack socket
 * reports) is the IPv4 address it maps.
 */
export function clientNetwork(req: Request, trustedHops: number): string {
  return clientNetworkTiers(req, trustedHops)[0]?.network ?? 'unknown';
}

/**
 * The client's network and the coarser networks around it: IPv4 /32 and /24, IPv6 /64, /56 and
 * /48. One routed /48 holds 65,536 /64s, so a budget of the /64 alone is multiplied by as much.
 */
export function clientNetworkTiers(req: Request, trustedHops: number): readonly NetworkTier[] {
  // Read by the per-network budget and again by the route's own budgets: parsed once per request.
  const cached = parsedTiers.get(req);
  if (cached?.trustedHops === trustedHops) return cached.tiers;
  const tiers = networkTiersOf(clientIp(req, trustedHops));
  parsedTiers.set(req, { trustedHops, tiers });
  return tiers;
}

const parsedTiers = new WeakMap<Request, { trustedHops: number; tiers: readonly NetworkTier[] }>();

export function networkOf(ip: string): string {
  return networkTiersOf(ip)[0]?.network ?? ip;
}

export function networkTiersOf(ip: string): readonly NetworkTier[] {
  const v4 = ipv4Of(ip);
  if (v4 !== undefined) {
    return [
      { tier: 'ipv4-32', network: v4 },
      { tier: 'ipv4-24', network: `${v4.slice(0, v4.lastIndexOf('.'))}.0/24` },
    ];
  }
  const addr = isIPv6(ip) ? parsedIPv6(ip) : undefined;
  if (addr === undefined) return [{ tier: 'other', network: ip }];
  // The hexadecimal spelling of an IPv4-mapped address (`::ffff:cb00:7107`) is that IPv4 address too.
  if (addr.isIPv4MappedAddress()) return networkTiersOf(addr.toIPv4Address().toString());
  const { parts } = addr;
  const prefix = (bits: 64 | 56 | 48): string => {
    const kept = parts.slice(0, 4).map((part, i) => {
      const from = i * 16;
      if (from + 16 <= bits) return part;
      return from >= bits ? 0 : part & (0xffff << (from + 16 - bits));
    });
    return `${new ipaddr.IPv6([...kept, 0, 0, 0, 0]).toRFC5952String()}/${bits}`;
  };
  return [
    { tier: 'ipv6-64', network: prefix(64) },
    { tier: 'ipv6-56', network: prefix(56) },
    { tier: 'ipv6-48', network: prefix(48) },
  ];
}

/**
 * An IPv4 address in dotted decimal, also when a dual-stack socket reports it IPv4-mapped
 * (`::ffff:203.0.113.7`), the form every IPv4 peer of a `::` listener has. Told apart by node:net
 * before ipaddr parses anything: parsing that form as IPv6 cost 4.8 µs a request, this 0.3.
 */
function ipv4Of(ip: string): string | undefined {
  if (isIPv4(ip)) return ip;
  const mapped = /^::ffff:(.+)$/i.exec(ip)?.[1];
  return mapped !== undefined && isIPv4(mapped) ? mapped : undefined;
}

/** ipaddr's grammar is narrower than node:net's in places (zone ids): what it refuses counts as itself. */
function parsedIPv6(ip: string): ipaddr.IPv6 | undefined {
  try {
    return ipaddr.IPv6.parse(ip);
  } catch {
    return undefined;
  }
}
