import { createRequire } from 'node:module';

const { prettyLine } = createRequire(__filename)('../../scripts/pretty-logs.js') as {
  prettyLine: (line: string) => string | null;
};

/** `npm run demo` shows readable log lines and hides the start-up noise. */
describe('demo log pretty-printer', () => {
  const line = (entry: Record<string, unknown>): string =>
    JSON.stringify({ level: 30, time: 0, pid: 1, hostname: 'h', service: 'svc-auth', ...entry });

  it('drops the route-mapping and module lines of start-up', () => {
    expect(prettyLine(line({ context: 'RouterExplorer', msg: 'Mapped {/t/:tenantId/guest, POST} route' }))).toBeNull();
    expect(prettyLine(line({ context: 'InstanceLoader', msg: 'AppModule dependencies initialized' }))).toBeNull();
  });

  it('prints a request as one line, and passes the dev mail text through untouched', () => {
    const out = prettyLine(
      line({ req: { id: 'x', method: 'POST', path: '/t/acme/guest' }, res: { statusCode: 201 }, responseTime: 4 }),
    );
    expect(out).toContain('POST /t/acme/guest 201 4 ms');
    expect(out).not.toContain('hostname');
    expect(out).not.toMatch(/^\{/);
    expect(prettyLine('Your sign-in code is 123456.')).toBe('Your sign-in code is 123456.\n');
  });
});
