/**
 * The flow cookie outside a browser (Node, native shells): browsers keep it themselves, and
 * forbid scripts both to send `Cookie` and to read `Set-Cookie`, so a jar is only for the other
 * runtimes. The service's cookies are host-only, so one jar serves one service origin.
 */
export interface CookieJar {
  /** The `Cookie` header to send, or undefined when the jar is empty. */
  header(): string | undefined;
  /** Keeps the cookies of a response's `Set-Cookie` headers. */
  store(setCookies: readonly string[]): void;
  get(name: string): string | undefined;
}

/**
 * A process-memory jar: name=value pairs, each until its Max-Age runs out (Max-Age=0 removes it
 * at once). Every flow leaves a cookie of its own, so a native process that lives for days would
 * otherwise send a growing `Cookie` header until the service refused it.
 */
export class MemoryCookieJar implements CookieJar {
  private readonly cookies = new Map<string, { value: string; expiresAt: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  header(): string | undefined {
    this.dropExpired();
    if (this.cookies.size === 0) return undefined;
    return [...this.cookies].map(([name, { value }]) => `${name}=${value}`).join('; ');
  }

  store(setCookies: readonly string[]): void {
    for (const line of setCookies) {
      const [pair = '', ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      if (eq <= 0) continue;
      const name = pair.slice(0, eq).trim();
      const maxAge = attributes.map((a) => /^\s*max-age\s*=\s*(-?\d+)\s*$/i.exec(a)?.[1]).find((v) => v !== undefined);
      const expiresAt = maxAge === undefined ? Infinity : this.now() + Number(maxAge) * 1000;
      if (expiresAt <= this.now()) this.cookies.delete(name);
      else this.cookies.set(name, { value: pair.slice(eq + 1).trim(), expiresAt });
    }
  }

  get(name: string): string | undefined {
    this.dropExpired();
    return this.cookies.get(name)?.value;
  }

  private dropExpired(): void {
    const now = this.now();
    for (const [name, { expiresAt }] of this.cookies) if (expiresAt <= now) this.cookies.delete(name);
  }
}
