# Stand-ins for the compose file's postgres, redis and mailpit images, from Debian bookworm's
# packages (PostgreSQL 15, Redis 7.0) and a small SMTP + HTTP mail catcher. Each honours the
# interface the compose file uses: POSTGRES_USER, POSTGRES_PASSWORD, POSTGRES_DB and PGDATA;
# redis-server with its arguments; MP_SMTP_BIND_ADDR and MP_UI_BIND_ADDR.
FROM node:24-bookworm-slim
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql-15 redis-server >/dev/null \
 && rm -rf /var/lib/apt/lists/* /var/lib/postgresql/15 /etc/postgresql/15 \
 && mkdir -p /var/lib/postgresql/data /var/run/postgresql /data \
 && chown postgres:postgres /var/lib/postgresql/data /var/run/postgresql \
 && chmod 1777 /var/run/postgresql \
 && chown redis:redis /data
ENV PATH=/usr/lib/postgresql/15/bin:$PATH PGDATA=/var/lib/postgresql/data
COPY standin-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
COPY mail-catcher.js /usr/local/bin/mail-catcher.js
WORKDIR /data
ENTRYPOINT ["docker-entrypoint.sh"]
