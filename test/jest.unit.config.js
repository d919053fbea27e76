module.exports = {
  rootDir: '..',
  testMatch: ['<rootDir>/test/unit/**/*.spec.ts'],
  ...require('./jest.transform.js'),
  testEnvironment: 'node',
  // The SDK is ESM source: its relative imports name the emitted .js files.
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
};
