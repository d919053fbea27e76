#!/usr/bin/env bash
# Starts a working demo on a fresh clone: dependencies, PostgreSQL and Redis, dev secrets
# (generated once into .env.local), migrations, the control-plane seed, a demo tenant with a
# client and a membership, then the service on http://localhost:3000 (API) and
# http://127.0.0.1:3000 (console), the demo game on http://127.0.0.1:3001 (another site than the
# API), a stand-in chat platform on http://127.0.0.1:3002 and a demo OpenID Connect provider on
# http://127.0.0.1:3003 (the tests' oidc-provider issuer, with a page that signs in one demo
# account), registered for the demo tenant as `demo-oidc`. Codes are printed to this console
# (MAIL_TRANSPORT=log), among log lines made readable by scripts/pretty-logs.js.
set -euo pipefail
cd "$(dirname "$0")/.."

DEMO_EMAIL=${DEMO_EMAIL:-dev@example.com}
PORT=${PORT:-3000}
GAME_PORT=${GAME_PORT:-3001}
DEMO_CHAT_PORT=${DEMO_CHAT_PORT:-3002}
DEMO_OIDC_PORT=${DEMO_OIDC_PORT:-3003}
DB=${DEMO_DATABASE:-svc_auth_dev}

bash scripts/install-deps.sh
# shellcheck source=scripts/pinned-node.sh
. scripts/pinned-node.sh
bash scripts/ensure-services.sh
npm run --silent build
npm run --silent build:sdk
admin() { node dist/src/cli/admin.js "$@"; }

# Development secrets, generated once by the service's own CLI: an existing file is kept, so a
# developer's sessions and keys survive restarts of the demo.
if [ ! -e .env.local ]; then
  (
    umask 077
    { echo '# Development secrets, generated once by npm run demo. Never commit this file.'; admin generate-secrets; } >.env.local.new
    mv -n .env.local.new .env.local
    rm -f .env.local.new
  )
  echo "dev secrets: wrote .env.local"
fi

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
CHAT_PLATFORM_AUTHORIZE_URL=${CHAT_PLATFORM_AUTHORIZE_URL:-http://127.0.0.1:$DEMO_CHAT_PORT/oauth2/authorize}
CHAT_PLATFORM_API_BASE=${CHAT_PLATFORM_API_BASE:-http://127.0.0.1:$DEMO_CHAT_PORT/api/v10}
GAME_ORIGIN=http://127.0.0.1:$GAME_PORT
set +a

admin migrate
admin seed-control-plane
# The demo records are created once; later runs find them in place.
admin tenant create --id demo --name "Demo Studio" 2>/dev/null || echo '{"tenant":"demo exists"}'
admin client create --tenant demo --id cli_demo_game --name "Demo Game" --type browser \
  --scopes "openid offline_access" --redirect-uri "http://127.0.0.1:$PORT/" 2>/dev/null || echo '{"client":"cli_demo_game exists"}'
admin membership add --tenant demo --email "$DEMO_EMAIL" --role owner
# The demo game: a browser client whose page is on another site than the API (contract 11).
admin client create --tenant demo --id cli_star_clicker --name "Star Clicker" --type browser \
  --scopes "openid offline_access" --redirect-uri "$GAME_ORIGIN/" --web-origins "$GAME_ORIGIN" \
  2>/dev/null || echo '{"client":"cli_star_clicker exists"}'
# The secret goes on stdin, never on the command line (where ps would show it).
printf '%s\n' demo-chat-secret | admin chat configure --tenant demo --client-id demo-chat-app \
  --client-secret-file - --redirect-uri "$AUTH_ORIGIN/t/demo/chat/callback"

# The demo OpenID Connect provider: `provider add` reads its discovery document, so it runs first.
# Its one client (the secret is a development value, as the chat platform's) returns to this
# tenant's provider callback; its login page signs in the one demo account.
OIDC_ISSUER=http://127.0.0.1:$DEMO_OIDC_PORT
OIDC_NAME='Demo OpenID provider'
OIDC_READY=$(mktemp)
ISSUER_CONFIG=$(
  cat <<JSON
{"port": $DEMO_OIDC_PORT, "loginPage": {"name": "$OIDC_NAME"},
 "account": {"sub": "demo-player", "email": "demo.player@example.com", "email_verified": true},
 "clients": [{"client_id": "demo-oidc-app", "client_secret": "demo-oidc-secret",
              "redirect_uris": ["$AUTH_ORIGIN/t/demo/providers/callback"]}]}
JSON
) node test/support/oidc-issuer-server.mjs >"$OIDC_READY" &
OIDC_PID=$!
trap 'kill $OIDC_PID 2>/dev/null || true; rm -f "$OIDC_READY"' EXIT
# It prints READY once listening; it exits (port taken, say) with its reason on stderr.
for _ in $(seq 1 150); do
  if grep -q '^READY' "$OIDC_READY" || ! kill -0 "$OIDC_PID" 2>/dev/null; then break; fi
  sleep 0.1
done
grep -q '^READY' "$OIDC_READY" || { echo "demo: the OpenID provider did not start on port $DEMO_OIDC_PORT" >&2; exit 1; }
# Written again on every run, as the chat configuration above: sealed under this checkout's keys
# (.env.local), at this run's port. Removing it keeps the identities it proved.
admin provider remove --tenant demo --id demo-oidc >/dev/null 2>&1 || true
printf '%s\n' demo-oidc-secret | admin provider add --tenant demo --id demo-oidc --issuer "$OIDC_ISSUER" \
  --client-id demo-oidc-app --client-secret-file -

node scripts/demo-chat-platform.js &
CHAT_PID=$!
GAME_TENANT=demo GAME_CLIENT_ID=cli_star_clicker GAME_PROVIDER_ID=demo-oidc GAME_PROVIDER_NAME="$OIDC_NAME" \
  node scripts/game-server.js &
GAME_PID=$!
trap 'kill $OIDC_PID $CHAT_PID $GAME_PID 2>/dev/null || true; rm -f "$OIDC_READY"' EXIT

cat <<MSG

  Console: $CONSOLE_ORIGIN/   (sign in as $DEMO_EMAIL; the code is printed below)
  API:     $AUTH_ORIGIN/t/control-plane/.well-known/openid-configuration
  Game:    $GAME_ORIGIN/   (plays as a guest; attach an email, whose code is printed below,
           the demo chat platform or the $OIDC_NAME at $OIDC_ISSUER/;
           the player id stays the same: docs/game-developers.md)

MSG
# Readable logs for a person at a terminal: pretty lines, no route-mapping noise (scripts/pretty-logs.js).
node --max-old-space-size=128 --max-semi-space-size=16 dist/src/main.js 2>&1 | node scripts/pretty-logs.js
