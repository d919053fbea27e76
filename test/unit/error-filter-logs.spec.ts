import { Logger } from '@nestjs/common';
import type { ArgumentsHost } from '@nestjs/common';
import { ErrorFilter } from '../../src/http/error.filter';
import type { MetricsService } from '../../src/platform/metrics/metrics.service';

/**
 * Logs hold no email address (docs/security.md): an unexpected error may quote its input in its
 * message and stack, and is logged with the address cut out, like a dependency's error.
 */
describe('the error filter’s log of an unhandled error', () => {
  it('cuts email addresses out of the message and the stack', () => {
    const logged: unknown[] = [];
    const spy = jest
      .spyOn(Logger.prototype, 'error')
      .mockImplementation((...args: unknown[]) => void logged.push(args));
    const json = jest.fn();
    const status = jest.fn(() => ({ json }));
    const res = { headersSent: false, setHeader: jest.fn(), status };
    const host = {
      switchToHttp: () => ({ getResponse: () => res, getRequest: () => ({ path: '/t/acme/guest' }) }),
    } as unknown as ArgumentsHost;
    try {
      new ErrorFilter({} as MetricsService).catch(new TypeError('cannot read player.one@example.com'), host);
    } finally {
      spy.mockRestore();
    }
    const text = JSON.stringify(logged);
    expect(text).toContain('unhandled error');
    expect(text).toContain('cannot read <address>');
    expect(text).not.toContain('example.com');
    expect(status).toHaveBeenCalledWith(500);
  });
});
