# syntax=docker/dockerfile:1
# The Kassa edge image: a store's edge: terminals, kitchen displays and the store console.
# Build from the repository root:
#   docker build -f deploy/docker/edge.Dockerfile --build-arg VERSION=$(git describe --tags) -t kassa-edge .
# See deploy/README.md (images, compose, TLS, backups).

FROM golang:1.26-bookworm AS build
ARG VERSION=dev
WORKDIR /src
# mattn/go-sqlite3 is cgo: the builder's gcc compiles SQLite in.
ENV CGO_ENABLED=1
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    go build -trimpath -ldflags "-s -w -X kassa.dev/shared/kassa.Version=${VERSION}" -o /out/kassa-edge ./edge

# Same Debian release as the builder (glibc); ca-certificates for HTTPS
# to the hub.
FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 kassa \
    && useradd --system --uid 10001 --gid kassa --home-dir /var/lib/kassa --shell /usr/sbin/nologin kassa \
    && mkdir -p /var/lib/kassa/edge \
    && chown -R kassa:kassa /var/lib/kassa
COPY --from=build /out/kassa-edge /usr/local/bin/kassa-edge
ENV KASSA_HTTP_ADDR=0.0.0.0:8081 \
    KASSA_DATA_DIR=/var/lib/kassa/edge
USER 10001:10001
VOLUME /var/lib/kassa/edge
EXPOSE 8081
# No curl in the image: the binary checks its own /healthz (over HTTPS
# when KASSA_TLS_CERT is set), exit 0 or 1.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 CMD ["kassa-edge", "healthcheck"]
ENTRYPOINT ["kassa-edge"]
