module.exports = {
  rootDir: '..',
  testMatch: ['<rootDir>/test/e2e/**/*.e2e-spec.ts'],
  ...require('./jest.transform.js'),
  testEnvironment: 'node',
  // The SDK is ESM source: its relative imports name the emitted .js files.
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 30000,
  maxWorkers: 2,
};
