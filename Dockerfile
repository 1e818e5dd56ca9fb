# syntax=docker/dockerfile:1
# The example book catalogue as a flotilla cluster: `docker build -t books . && docker run -p 3000:3000 -p 9464:9464 books`

FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Scripts are skipped: the `node` devDependency would download a Node binary the image already has.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN node node_modules/typescript/bin/tsc -p tsconfig.build.json

FROM node:24-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# The runtime dependencies, then pg and @redis/client: optional peer dependencies of flotilla, which the image installs
# itself (deploy/kubernetes.yaml keeps the books in PostgreSQL and coordinates through Redis or PostgreSQL), at the
# versions package-lock.json records. `--save-prod --no-save`: as runtime dependencies, package.json left as it is.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
  && npm install --omit=dev --save-prod --no-save --ignore-scripts --no-audit --no-fund \
    $(node -p "['pg', '@redis/client'].map((name) => name + '@' + require('./package-lock.json').packages['node_modules/' + name].version).join(' ')")

FROM node:24-slim
# production (also flotilla start's default): no /docs, no internal error details, and the development fallbacks of
# config/app.yaml's secrets refused. Give them at run time (docs/guides/deployment.md), or the start stops with exit 2:
#   docker run -e COOKIE_SECRET=… -e BOOKS_API_KEY=… -e BOOKS_READER_PASSWORD=… books
# optional: DATABASE_URL (else the SQLite file below), COORDINATION_URL (replicas), PORT, WORKERS, LOG_LEVEL
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY config ./config
COPY examples ./examples
# Node's compile cache (V8 code cache, see docs/guides/deployment.md), filled at build time: the first start of a container
# does not compile flotilla, its dependencies and the service again. Owned by `node`, which adds what it compiles later.
ENV NODE_COMPILE_CACHE=/app/.node-compile-cache
# data/: the example's embedded SQLite database (without DATABASE_URL), written by the `node` user.
RUN node dist/cli/main.js openapi --config config/app.yaml > /dev/null && mkdir -p data && chown -R node:node "$NODE_COMPILE_CACHE" data
USER node
EXPOSE 3000 9464
# The primary is PID 1 and handles SIGTERM itself: the workers finish in-flight requests and hooks within 10 s.
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=3s --start-period=15s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Exec form, the primary directly: never `npm start`, which does not forward signals.
CMD ["node", "dist/cli/main.js", "start", "--config", "config/app.yaml"]
