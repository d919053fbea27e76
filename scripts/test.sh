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
# Only what a single server cannot prove runs again: suites marked `// @redis-cluster` exercise the
# multi-key scripts and commands (keys that must share a slot); test/unit/redis-cluster-coverage.spec.ts
# fails when one of them has no marked suite (docs/testing.md).
mapfile -t cluster_suites < <(grep -rlE --include='*.e2e-spec.ts' '^// @redis-cluster ' test/e2e | sort)
nodes=$(bash scripts/redis-cluster.sh start)
trap 'bash scripts/redis-cluster.sh stop >/dev/null 2>&1 || true' EXIT
TEST_REDIS_CLUSTER_NODES=$nodes npx jest --config test/jest.e2e.config.js --runTestsByPath "${cluster_suites[@]}"

# Last: the image and the compose stack, built and run by a Docker daemon of its own.
echo "== container (image and compose stack)" >&2
npm run --silent test:container
