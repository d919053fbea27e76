# Sourced by the project's scripts after install-deps.sh: puts the Node.js 24 LTS that the
# lockfile pins (devDependency "node", a registry package carrying the binary) first on PATH and
# refuses to go on with any other major, so nothing silently runs on the system's Node.
# shellcheck shell=bash
PATH="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/node_modules/.bin:$PATH"
export PATH
hash -r
pinned_node_version=$(node -p 'process.versions.node')
case "$pinned_node_version" in
  24.*) echo "node: v$pinned_node_version ($(command -v node))" >&2 ;;
  *) echo "node: v$pinned_node_version found, but this project runs on Node.js 24 (npm ci installs it)" >&2; exit 1 ;;
esac
