/**
 * The token set beside the refresh token in storage, so that a tab waiting for the refresh lock
 * can take over what the tab before it just received instead of rotating again (contract 13).
 * Read back with a decoder: another tab may run an older or newer release of this SDK.
 */
export interface StoredSession {
  /** The refresh token this set came with; stale when storage now holds another. */
  readonly refresh_token: string;
  readonly access_token: string;
  readonly session_id: string;
  readonly scope: string;
  readonly id_token?: string;
  /** Epoch milliseconds. */
  readonly expires_at: number;
  /** Epoch milliseconds: when a client should refresh rather than take this set over. */
  readonly refresh_at: number;
}

export function encodeStoredSession(s: StoredSession): string {
  return JSON.stringify({ v: 1, ...s });
}

export function decodeStoredSession(raw: string | null): StoredSession | null {
  if (raw === null) return null;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const r = value as Record<string, unknown>;
  const text = (k: string) => typeof r[k] === 'string' && r[k] !== '';
  const time = (k: string) => typeof r[k] === 'number' && Number.isFinite(r[k]);
  if (r.v !== 1 || !text('refresh_token') || !text('access_token') || !text('session_id')) return null;
  if (typeof r.scope !== 'string' || !time('expires_at') || !time('refresh_at')) return null;
  if (r.id_token !== undefined && typeof r.id_token !== 'string') return null;
  return {
    refresh_token: r.refresh_token as string,
    access_token: r.access_token as string,
    session_id: r.session_id as string,
    scope: r.scope,
    ...(typeof r.id_token === 'string' ? { id_token: r.id_token } : {}),
    expires_at: r.expires_at as number,
    refresh_at: r.refresh_at as number,
  };
}
