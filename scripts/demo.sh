#!/usr/bin/env bash
# Starts a working demo on a fresh clone: dependencies, PostgreSQL and Redis, dev secrets
# (generated once into .env.local), migrations, the control-plane seed, a demo tenant with a
# client and a membership, then the service on http://localhost:3000 (API) and
# http://127.0.0.1:3000 (console). Codes are printed to this console (MAIL_TRANSPORT=log).
set -euo pipefail
cd "$(dirname "$0")/.."

DEMO_EMAIL=${DEMO_EMAIL:-dev@example.com}
PORT=${PORT:-3000}
DB=${DEMO_DATABASE:-svc_auth_dev}

bash scripts/install-deps.sh
# shellcheck source=scripts/pinned-node.sh
. scripts/pinned-node.sh
bash scripts/ensure-services.sh
node scripts/dev-secrets.js .env.local

psql -h 127.0.0.1 -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$DB'" | grep -q 1 \
  || psql -h 127.0.0.1 -U postgres -qc "CREATE DATABASE $DB"

set -a
# shellcheck disable=SC1091
. ./.env.local
NODE_ENV=development
PORT=$PORT
AUTH_ORIGIN=${AUTH_ORIGIN:-http://localhost:$PORT}
CONSOLE_ORIGIN=${CONSOLE_ORIGIN:-http://127.0.0.1:$PORT}
DATABASE_URL=${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/$DB}
REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379}
CONSOLE_CLIENT_ID=${CONSOLE_CLIENT_ID:-cli_console}
MAIL_TRANSPORT=${MAIL_TRANSPORT:-log}
set +a

npm run --silent build
admin() { node dist/src/cli/admin.js "$@"; }
admin migrate
admin seed-control-plane
# The demo records are created once; later runs find them in place.
admin tenant create --id demo --name "Demo Studio" 2>/dev/null || echo '{"tenant":"demo exists"}'
admin client create --tenant demo --id cli_demo_game --name "Demo Game" --type browser \
  --scopes "openid offline_access" --redirect-uri "http://127.0.0.1:$PORT/" 2>/dev/null || echo '{"client":"cli_demo_game exists"}'
admin membership add --tenant demo --email "$DEMO_EMAIL" --role owner

cat <<MSG

  Console: $CONSOLE_ORIGIN/   (sign in as $DEMO_EMAIL; the code is printed below)
  API:     $AUTH_ORIGIN/t/control-plane/.well-known/openid-configuration

MSG
exec node --max-old-space-size=128 --max-semi-space-size=4 dist/src/main.js
