// The part of autocannon 8's API the bench uses (the package ships no types).
declare module 'autocannon' {
  import type { IncomingHttpHeaders } from 'node:http';

  namespace autocannon {
    interface RawRequest {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string;
    }
    type Context = Record<string, unknown>;
    interface Request extends RawRequest {
      setupRequest?: (req: RawRequest, context: Context) => RawRequest;
      onResponse?: (status: number, body: string, context: Context, headers: IncomingHttpHeaders) => void;
    }
    interface Options extends RawRequest {
      url: string;
      connections?: number;
      duration?: number;
      amount?: number;
      overallRate?: number;
      requests?: Request[];
    }
    interface Histogram {
      average: number;
      p50: number;
      p99: number;
      total: number;
    }
    interface Result {
      requests: Histogram;
      latency: Histogram;
      non2xx: number;
      errors: number;
      timeouts: number;
      statusCodeStats: Record<string, { count: number }>;
    }
  }
  function autocannon(
    options: autocannon.Options,
    callback: (err: Error | null, result: autocannon.Result) => void,
  ): unknown;
  export = autocannon;
}
