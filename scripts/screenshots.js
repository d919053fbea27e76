#!/usr/bin/env node
// `npm run screenshots`: runs the console's Chromium journeys (test/e2e/console-bff/manage-browser),
// which write every console view at 1280 and 390 px to test-output/screenshots/, and copies the ones
// the README shows to docs/images/.
'use strict';
const { copyFileSync, mkdirSync } = require('node:fs');
const { execFileSync } = require('node:child_process');
const { join } = require('node:path');

const ROOT = join(__dirname, '..');
const SHOTS = join(ROOT, 'test-output', 'screenshots');
const IMAGES = join(ROOT, 'docs', 'images');
const README_IMAGES = {
  'console-dashboard-1280.png': 'console-dashboard.png',
  'console-dashboard-390.png': 'console-dashboard-phone.png',
  'console-players-1280.png': 'console-players.png',
};

execFileSync('npx', ['jest', '--config', 'test/jest.e2e.config.js', 'test/e2e/console-bff/manage-browser'], {
  stdio: 'inherit',
  cwd: ROOT,
});
mkdirSync(IMAGES, { recursive: true });
for (const [from, to] of Object.entries(README_IMAGES)) {
  copyFileSync(join(SHOTS, from), join(IMAGES, to));
  process.stderr.write(`docs/images/${to}\n`);
}
