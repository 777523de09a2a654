# syntax=docker/dockerfile:1

# --- build: compile TypeScript ---------------------------------------------
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# --- deps: production dependencies only --------------------------------------
FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# --- runtime ------------------------------------------------------------------
FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    PORT=3000 \
    PROMPTS_DIR=/app/prompts \
    TRANSCRIPTS_DIR=/data/transcripts
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY prompts ./prompts
RUN mkdir -p /data/transcripts && chown -R node:node /data
# The language detector's table, built once here (node_modules/.cache/hotline) rather than at every
# start by a process that may not write there.
RUN node --input-type=module -e "await (await import('./dist/language/eld-loader.js')).loadEld()"
USER node
EXPOSE 3000
VOLUME ["/data"]
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "dist/main.js"]
