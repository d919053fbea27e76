#!/usr/bin/env bash
# The whole test suite: lint, type-check, unit tests, e2e tests against real PostgreSQL, Redis,
# SMTP and a fake chat platform, and the browser test in Debian's Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
# shellcheck source=scripts/pinned-node.sh
. scripts/pinned-node.sh
bash scripts/ensure-services.sh --with-chromium

echo "== format" >&2
npm run --silent format:check
echo "== lint" >&2
npm run --silent lint
echo "== type-check" >&2
npm run --silent typecheck
echo "== build" >&2
npm run --silent build
echo "== build the guest SDK package (sdk/: ESM and type declarations)" >&2
npm run --silent build:sdk
echo "== unit" >&2
npx jest --config test/jest.unit.config.js
echo "== e2e" >&2
npx jest --config test/jest.e2e.config.js

echo "== e2e on a 3-master Redis Cluster" >&2
nodes=$(bash scripts/redis-cluster.sh start)
trap 'bash scripts/redis-cluster.sh stop >/dev/null 2>&1 || true' EXIT
# The Chromium suites exercise the browser, not Redis: they run once, above.
TEST_REDIS_CLUSTER_NODES=$nodes npx jest --config test/jest.e2e.config.js --testPathIgnorePatterns '/(browser|two-tabs)\.e2e-spec\.ts$' -- test/e2e/management-auth test/e2e/management/ test/e2e/console-bff test/e2e/guest test/e2e/hostile-input test/e2e/flow-integrity test/e2e/flood \
  test/e2e/operations/user-admin.e2e-spec.ts test/e2e/operations/key-rotation.e2e-spec.ts

# Last: the image and the compose stack, built and run by a Docker daemon of its own.
echo "== container (image and compose stack)" >&2
npm run --silent test:container
