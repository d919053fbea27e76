#!/bin/sh
# Entry point of the container test's stand-in images (standin-services.Dockerfile). For
# `postgres` it does what the official postgres image's entry point does for the compose file: on
# an empty PGDATA, initdb with POSTGRES_USER as superuser and POSTGRES_PASSWORD required over TCP,
# then POSTGRES_DB. `mailpit` starts the mail catcher. Anything else runs as given.
set -eu
case "${1:-}" in
  postgres)
    shift
    if [ ! -s "$PGDATA/PG_VERSION" ]; then
      user=${POSTGRES_USER:-postgres}
      pwfile=$(mktemp)
      printf '%s\n' "${POSTGRES_PASSWORD:?the official image refuses to start without one}" >"$pwfile"
      initdb -D "$PGDATA" -U "$user" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 >/dev/null
      rm -f "$pwfile"
      echo 'host all all all scram-sha-256' >>"$PGDATA/pg_hba.conf"
      db=${POSTGRES_DB:-$user}
      if [ "$db" != postgres ]; then
        echo "CREATE DATABASE \"$db\"" | postgres --single -D "$PGDATA" -j postgres >/dev/null
      fi
    fi
    exec postgres -D "$PGDATA" -c listen_addresses='*' "$@"
    ;;
  mailpit) exec node /usr/local/bin/mail-catcher.js ;;
  *) exec "$@" ;;
esac
