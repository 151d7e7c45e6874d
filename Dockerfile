# The service image. Postgres and NATS are separate services (see docker-compose.yml), so the
# optional embedded Postgres is left out.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The patches apply at install (postinstall); optional packages stay for the build (esbuild's
# platform binary is one) and are pruned with the dev ones after it.
COPY patches patches
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY service service
COPY src src
COPY actors actors
COPY subjects subjects
COPY scripts scripts
COPY bench bench
COPY portal portal
# dist is a link to the build's folder (scripts/build.mjs): the image takes the folder itself.
RUN npm run build && cp -rL dist /app/dist-image && npm prune --omit=dev --omit=optional

FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080
COPY package.json ./
COPY migrations migrations
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist-image dist
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "--enable-source-maps", "--max-semi-space-size=32", "dist/service/main.js"]
