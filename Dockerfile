# Multi-stage: build with dev dependencies, run with production dependencies only, as non-root.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY src ./src
COPY migrations ./migrations
RUN npm run build

FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:24-bookworm-slim
LABEL org.opencontainers.image.title="svc-auth" \
      org.opencontainers.image.description="Authentication service: management console sign-in and guest sessions" \
      org.opencontainers.image.licenses="UNLICENSED" \
      org.opencontainers.image.documentation="docs/operations.md"
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
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# Release step (docker-compose.yml's migrate service): node dist/src/cli/admin.js migrate, then
# seed-control-plane. Secrets: node dist/src/cli/admin.js generate-secrets --env-file
CMD ["node", "dist/src/main.js"]
