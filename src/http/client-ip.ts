import type { Request } from 'express';

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
