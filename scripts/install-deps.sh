#!/usr/bin/env bash
# Installs node_modules from the lockfile when they are missing or older than the lockfile.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "install-deps: npm ci" >&2
  npm ci --no-audit --no-fund --loglevel=error
fi
