# syntax=docker/dockerfile:1
# jiaowu-jobs: one image for every role (ROLE=api | worker | both).
#   docker build -t jiaowu-jobs .
#   docker run -e DATABASE_URL=... -e RABBITMQ_URL=... -e JWT_SECRET=... -p 4000:4000 jiaowu-jobs

# ---- build: full dependencies, compile TypeScript, then drop dev dependencies ----
FROM node:20-bookworm-slim AS build
WORKDIR /app
ENV npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
RUN npm run build \
 && npm prune --omit=dev \
 && mkdir -p schema migrations

# ---- runtime: compiled code and production dependencies only, as a non-root user ----
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production \
    PORT=4000
COPY --from=build --chown=node:node /app/package.json /app/package-lock.json ./
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
COPY --from=build --chown=node:node /app/schema ./schema
COPY --from=build --chown=node:node /app/migrations ./migrations
# Without DATABASE_URL the service runs an embedded PostgreSQL in ./.data: writable by `node`.
RUN mkdir -p /app/.data && chown node:node /app/.data
USER node
EXPOSE 4000
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 4000) + '/health/live').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# --no-allocation-site-pretenuring, --max-semi-space-size=32: see the README ("Node flags").
CMD ["node", "--no-allocation-site-pretenuring", "--max-semi-space-size=32", "dist/src/main.js"]
