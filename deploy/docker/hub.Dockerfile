# syntax=docker/dockerfile:1
# The Kassa hub image: partner API, head office, webhooks; edges connect to its leaf port.
# Build from the repository root:
#   docker build -f deploy/docker/hub.Dockerfile --build-arg VERSION=$(git describe --tags) -t kassa-hub .
# See deploy/README.md (images, compose, TLS, backups).

FROM golang:1.26-bookworm AS build
ARG VERSION=dev
WORKDIR /src
# mattn/go-sqlite3 is cgo: the builder's gcc compiles SQLite in.
ENV CGO_ENABLED=1
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    go build -trimpath -ldflags "-s -w -X kassa.dev/shared/kassa.Version=${VERSION}" -o /out/kassa-hub ./hub

# Same Debian release as the builder (glibc); ca-certificates for HTTPS
# to the hub and partners' webhook endpoints.
FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 kassa \
    && useradd --system --uid 10001 --gid kassa --home-dir /var/lib/kassa --shell /usr/sbin/nologin kassa \
    && mkdir -p /var/lib/kassa/hub \
    && chown -R kassa:kassa /var/lib/kassa
COPY --from=build /out/kassa-hub /usr/local/bin/kassa-hub
ENV KASSA_HTTP_ADDR=0.0.0.0:8080 \
    KASSA_LEAF_HOST=0.0.0.0 \
    KASSA_LEAF_PORT=7422 \
    KASSA_DATA_DIR=/var/lib/kassa/hub
USER 10001:10001
VOLUME /var/lib/kassa/hub
EXPOSE 8080 7422
# No curl in the image: the binary checks its own /healthz (over HTTPS
# when KASSA_TLS_CERT is set), exit 0 or 1.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 CMD ["kassa-hub", "healthcheck"]
ENTRYPOINT ["kassa-hub"]
