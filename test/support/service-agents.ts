import request from 'supertest';
import type { AppConfig } from '../../src/config/config';
import { forwardedHost } from '../../src/http/host-routing';
import type { OpenApiResponses } from './openapi-responses';
import type { SmtpCatcher } from './smtp-catcher';

/**
 * Agents on a running service, for the e2e suites (through TestApp) and the bench (remoteService):
 * nothing here loads the application itself.
 */
export const CONSOLE_CLIENT_ID = 'cli_console';

/**
 * What the flow helpers (management-flow.ts, console-flow.ts) need of a running service: its
 * agents, origins, mail and the console client's secret. A TestApp is one; so is remoteService().
 */
export interface ServiceUnderTest {
  readonly authOrigin: string;
  readonly consoleOrigin: string;
  readonly smtp: SmtpCatcher;
  readonly config: Pick<AppConfig, 'consoleClientSecret'>;
  auth(): ReturnType<typeof request>;
  console(): ReturnType<typeof request>;
}

/**
 * A service in another process (the bench's), driven by the same helpers as a TestApp. Its
 * answers are not checked against the OpenAPI document: the e2e suites do that.
 */
export function remoteService(opts: {
  readonly port: number;
  readonly authOrigin: string;
  readonly consoleOrigin: string;
  readonly smtp: SmtpCatcher;
  readonly consoleClientSecret: string;
}): ServiceUnderTest {
  return {
    authOrigin: opts.authOrigin,
    consoleOrigin: opts.consoleOrigin,
    smtp: opts.smtp,
    config: { consoleClientSecret: opts.consoleClientSecret },
    auth: () => viaHost(opts.port, new URL(opts.authOrigin).host),
    console: () => viaHost(opts.port, new URL(opts.consoleOrigin).host),
  };
}

const METHODS = new Set(['get', 'post', 'put', 'patch', 'delete', 'head', 'options']);

/**
 * A supertest agent on this instance's port whose requests carry the given Host header, and whose
 * every answer is checked against the OpenAPI document when `checked` is given.
 */
export function viaHost(
  port: number,
  host: string,
  checked?: { responses: OpenApiResponses; trustProxy: boolean },
): ReturnType<typeof request> {
  const agent = request(`http://127.0.0.1:${port}`);
  return new Proxy(agent, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof prop === 'string' && METHODS.has(prop) && typeof value === 'function') {
        return (path: string) => {
          const test = (value as (p: string) => request.Test).call(target, path).set('Host', host);
          return checked ? checkedAgainstDocument(test, checked) : test;
        };
      }
      return value;
    },
  });
}

/**
 * Adds the document check as the request's last assertion, when it is sent (`await`, `.then` and
 * `.end` all go through `end`): the test's own `.expect(...)` calls run first, so a wrong status
 * is reported as such, and a mismatch with the document fails the request like any assertion.
 */
function checkedAgainstDocument(
  test: request.Test,
  checked: { responses: OpenApiResponses; trustProxy: boolean },
): request.Test {
  const end = test.end.bind(test);
  let added = false;
  test.end = (callback) => {
    if (!added) {
      added = true;
      test.expect((res: request.Response) => {
        const sent = (res as unknown as { req?: { path?: string } }).req?.path;
        const forwarded = checked.trustProxy ? forwardedHost(test.get('X-Forwarded-Host')) : undefined;
        checked.responses.check({
          method: test.method,
          target: sent ?? test.url.replace(/^[a-z]+:\/\/[^/]+/i, ''),
          host: forwarded ?? test.get('Host'),
          status: res.status,
          contentType: res.headers['content-type'],
          text: res.text,
        });
      });
    }
    return end(callback);
  };
  return test;
}

/** Basic credentials of the console client, as the BFF sends them. */
export function consoleBasic(t: Pick<ServiceUnderTest, 'config'>): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(CONSOLE_CLIENT_ID)}:${encodeURIComponent(t.config.consoleClientSecret)}`).toString('base64')}`;
}
