import { probeUrl } from '../../src/health/container-probe';

describe("the container's health check", () => {
  it.each([
    [{}, 'http://127.0.0.1:3000/readyz'],
    [{ HOST: '0.0.0.0', PORT: '8080' }, 'http://127.0.0.1:8080/readyz'],
    [{ HOST: '::' }, 'http://127.0.0.1:3000/readyz'],
    [{ HOST: '10.0.0.5' }, 'http://10.0.0.5:3000/readyz'],
    [{ HOST: 'fd00::5', PORT: '3100' }, 'http://[fd00::5]:3100/readyz'],
  ])('probes /readyz where the service listens (%j)', (env, url) => {
    expect(probeUrl(env)).toBe(url);
  });
});
