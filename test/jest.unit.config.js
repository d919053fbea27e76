module.exports = {
  rootDir: '..',
  testMatch: ['<rootDir>/test/unit/**/*.spec.ts'],
  transform: { '^.+\\.ts$': require('./jest.transform.js') },
  testEnvironment: 'node',
};
