module.exports = {
  rootDir: '..',
  testMatch: ['<rootDir>/test/unit/**/*.spec.ts'],
  transform: { '^.+\\.ts$': require('./jest.swc.js') },
  testEnvironment: 'node',
};
