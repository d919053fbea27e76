# Multi-stage: build with dev dependencies, run with production dependencies only, as non-root.
# Needs BuildKit (the default since Docker 23; DOCKER_BUILDKIT=1 on older engines) for the
# optional build secret below.
#
# The base image is pinned by digest: the tag alone moves with every upstream rebuild, so two
# builds of the same commit could ship different system libraries or Node.js patch releases. To
# refresh the pin on purpose:
#   docker pull node:24-bookworm-slim
#   docker inspect --format '{{index .RepoDigests 0}}' node:24-bookworm-slim
# and put the digest it prints here (`docker buildx imagetools inspect node:24-bookworm-slim`
# prints it without pulling). The tag stays in the reference for readers; the digest decides.
ARG NODE_IMAGE=node:24-bookworm-slim@sha256:6f7b03f7c2c8e2e784dcf9295400527b9b1270fd37b7e9a7285cf83b6951452d

# Behind a TLS-intercepting proxy npm needs the proxy's CA: pass it as the build secret npm_ca
# (docs/operations.md, "Building behind a proxy"). A secret mount is never part of a layer, so the
# CA stays out of the image; without the secret npm uses its usual CAs.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=secret,id=npm_ca,required=false \
    if [ -s /run/secrets/npm_ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/npm_ca; fi; \
    npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY src ./src
COPY migrations ./migrations
RUN npm run build

# No production dependency has an install script, and the image must not run code that a
# registry package brings at install time: --ignore-scripts.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=secret,id=npm_ca,required=false \
    if [ -s /run/secrets/npm_ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/npm_ca; fi; \
    npm ci --omit=dev --ignore-scripts --no-audit --no-fund

FROM ${NODE_IMAGE}
LABEL org.opencontainers.image.title="svc-auth" \
      org.opencontainers.image.description="Authentication service: management console sign-in and guest sessions" \
      org.opencontainers.image.licenses="UNLICENSED" \
      org.opencontainers.image.documentation="docs/operations.md"
# Node.js as PID 1 never dies of SIGTERM: the service's shutdown hook closes it, then raises the
# signal again to end the process (NestJS), and the kernel ignores that signal for PID 1, so
# `docker stop` waited its 10 s and killed it. tini is PID 1 instead: it passes signals on and
# reaps zombies, and the service stops within a second.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*
ENTRYPOINT ["/usr/bin/tini", "--"]
ENV NODE_ENV=production
# Without limits V8 grows the heap lazily to ~230 MB under load. These keep peak RSS near 170 MB;
# a 16 MB young generation halves the scavenges' cost per request (docs/performance.md). npm
# start, the demo and the bench use the same flags.
ENV NODE_OPTIONS="--max-old-space-size=128 --max-semi-space-size=16"
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
USER node
EXPOSE 3000
# Readiness, not liveness: an instance that cannot reach PostgreSQL or Redis reports unhealthy.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s CMD ["node", "dist/src/health/container-probe.js"]
# Release step (docker-compose.yml's migrate service): node dist/src/cli/admin.js migrate, then
# seed-control-plane, then identity redigest (fills address digests a migration cannot make;
# docs/operations.md). Secrets: node dist/src/cli/admin.js generate-secrets --env-file
CMD ["node", "dist/src/main.js"]
