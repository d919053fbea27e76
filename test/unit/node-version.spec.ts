import { assertSupportedNode } from '../../src/platform/runtime/node-version';

describe('assertSupportedNode', () => {
  it.each(['20.20.2', '22.12.0', '18.0.0'])('refuses Node.js %s, naming the required major', (version) => {
    expect(() => assertSupportedNode(version)).toThrow(/Node\.js 24 LTS/);
  });

  it.each(['24.0.0', '24.21.0', '26.1.0'])('accepts Node.js %s', (version) => {
    expect(() => assertSupportedNode(version)).not.toThrow();
  });

  it('accepts the Node.js this test runs on, which the project pins', () => {
    expect(process.versions.node.startsWith('24.')).toBe(true);
    expect(() => assertSupportedNode()).not.toThrow();
  });
});
