# syntax=docker/dockerfile:1
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
ENV NODE_ENV=production
# V8 grows the heap lazily to ~230 MB under load; these limits keep peak RSS near 130 MB at the
# same throughput (README, performance).
ENV NODE_OPTIONS="--max-old-space-size=128 --max-semi-space-size=4"
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# Run migrations and the seed as a release step: docker run … node dist/src/cli/admin.js migrate
CMD ["node", "dist/src/main.js"]
