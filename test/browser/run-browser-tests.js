#!/usr/bin/env node
// The browser tests on their own (the console page, signing in and managing a tenant; the demo game
// on another site, one tab and two, and its OpenID Connect provider button): Debian's Chromium
// (installed with apt when missing, never a downloaded browser) driven by playwright-core against
// the real service, as a Jest e2e suite.
// `npm test` runs the same suite with the other e2e tests.
'use strict';
const { existsSync } = require('node:fs');
const { execFileSync } = require('node:child_process');

if (!existsSync('/usr/bin/chromium')) {
  process.stderr.write('chromium missing: installing it with apt-get\n');
  execFileSync('apt-get', ['update'], { stdio: 'inherit' });
  execFileSync('apt-get', ['install', '-y', '--no-install-recommends', 'chromium'], {
    stdio: 'inherit',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
}
const suites = [
  'test/e2e/console-bff/browser',
  'test/e2e/console-bff/manage-browser',
  'test/e2e/guest/browser',
  'test/e2e/guest/two-tabs',
  'test/e2e/guest/provider-browser',
];
execFileSync('npx', ['jest', '--config', 'test/jest.e2e.config.js', ...suites], {
  stdio: 'inherit',
  cwd: `${__dirname}/../..`,
});
process.stderr.write('screenshots: test-output/screenshots/\n');
