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

/** A process-memory jar: name=value pairs, an expired (Max-Age=0) cookie removed. */
export class MemoryCookieJar implements CookieJar {
  private readonly cookies = new Map<string, string>();

  header(): string | undefined {
    if (this.cookies.size === 0) return undefined;
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  store(setCookies: readonly string[]): void {
    for (const line of setCookies) {
      const [pair = '', ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      if (eq <= 0) continue;
      const name = pair.slice(0, eq).trim();
      const expired = attributes.some((a) => /^\s*max-age\s*=\s*0\s*$/i.test(a));
      if (expired) this.cookies.delete(name);
      else this.cookies.set(name, pair.slice(eq + 1).trim());
    }
  }

  get(name: string): string | undefined {
    return this.cookies.get(name);
  }
}
