import { AppError } from '../errors/app-error';
import { dependencyOf } from '../errors/dependency-failure';

/**
 * The `error` a failed callback sends to the game (RFC 6749 section 4.1.2.1 codes): a refusal of
 * this browser or account is `access_denied`, a dependency that failed `temporarily_unavailable`
 * (the game may offer a retry), anything else `server_error`.
 */
export function callbackError(err: unknown): 'access_denied' | 'temporarily_unavailable' | 'server_error' {
  if (err instanceof AppError)
    return err.code === 'forbidden'
      ? 'access_denied'
      : err.code === 'temporarily_unavailable'
        ? 'temporarily_unavailable'
        : 'server_error';
  return dependencyOf(err) ? 'temporarily_unavailable' : 'server_error';
}

export function withQuery(base: string, params: Record<string, string>): string {
  const url = new URL(base);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url.toString();
}
