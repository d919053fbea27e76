import { AppError } from '../errors/app-error';

/** Strict `Authorization: Bearer <token>` parsing (RFC 6750 b64token syntax, bounded length). */
export function parseBearer(header: string | undefined): string | null {
  if (typeof header !== 'string' || header.length > 8192) return null;
  const m = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i.exec(header);
  return m?.[1] ?? null;
}

/** The one 401 of every bearer policy: which check failed is never told (RFC 6750 §3.1). */
export function invalidToken(): AppError {
  return new AppError('unauthorized', undefined, { challenge: 'bearer' });
}
