# syntax=docker/dockerfile:1
# Debian (glibc) base on purpose: uWebSockets.js ships glibc-only binaries, and lmdb's prebuilt
# addon must match the libc it runs on, so every stage uses the same image.

# ---- build: all dependencies, compile TypeScript to dist/
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json ./
COPY src ./src
RUN npx tsc -p tsconfig.json

# ---- production dependencies only
FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force

# ---- runtime
FROM node:20-bookworm-slim
ENV NODE_ENV=production
# glibc: a fixed mmap threshold (128 KB) keeps big buffers out of the heap, where the freed ones
# would stay resident (glibc raises its threshold after each free otherwise). As `npm start`.
ENV MALLOC_MMAP_THRESHOLD_=131072
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# Committed WebAssembly modules (native/<name>/build.sh made them; no compiler needed here):
# dist/ loads them from ../native relative to itself.
COPY native/*.wasm ./native/
COPY package.json ./
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
# 6379: RESP (redis-cli, ioredis...); 8080: the Upstash-compatible REST API.
EXPOSE 6379 8080
# Alive = answers PING (or asks for a password).
HEALTHCHECK --interval=30s --timeout=3s --start-period=5s \
  CMD node -e "const s=require('net').connect(+(process.env.PORT||6379),'127.0.0.1');s.setTimeout(2000,()=>process.exit(1));s.on('error',()=>process.exit(1));s.on('data',d=>process.exit(/^(\+PONG|-NOAUTH)/.test(d)?0:1));s.write('PING\r\n')"
# Options given to `docker run <image> ...` are appended and override these (last one wins).
# --max-semi-space-size: as `npm start` (see "Node flags" in the README).
ENTRYPOINT ["node", "--max-semi-space-size=1", "dist/main.js", "--bind", "0.0.0.0", "--dir", "/data"]
CMD []
