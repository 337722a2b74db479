# Kassa — see README.md. Every target works from a fresh clone with Go and gcc.
GO       ?= go
PKGS     := ./shared/... ./sync/... ./edge/... ./hub/... ./web/... ./clienttest/...
# The black-box suites run again with their hubs on a throwaway PostgreSQL (docs/postgres.md,
# "The API suite on PostgreSQL": there the API suite runs the tests that start a hub).
PGAPI    := ./shared/httpapi/ ./shared/node/ ./hub/ ./hub/hubnode/ ./clienttest/...
# The sync suite runs a second time with its hubs on a throwaway PostgreSQL, whole
# (docs/postgres.md, "The sync suite on PostgreSQL").
PGSYNC   := ./hub/synctest/
# CGO is needed by mattn/go-sqlite3.
export CGO_ENABLED := 1

.PHONY: build run test bench bench-ingest lint clean verify chromium openapi-lint openapi-client compose-check

# VERSION stamps the binaries (kassa.Version); releases are git tags (README, Upgrades).
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

build:
	$(GO) build -ldflags "-X kassa.dev/shared/kassa.Version=$(VERSION)" -o bin/ ./edge ./hub

## run: build, then start a hub on :8080 and a demo edge on :8081 (Ctrl-C stops both)
run: build
	bash deploy/run-demo.sh

## test: every test of every module (installs chromium for the KDS browser test where missing),
## after the OpenAPI lint and the compose check; beside it, the black-box suites' hubs on PostgreSQL
## The PostgreSQL line runs beside the SQLite one (the tests mostly wait on conditions: each
## line alone keeps under one core busy); its output follows the SQLite line's.
test: chromium openapi-lint compose-check
	@pglog=$$(mktemp); \
	(KASSA_TEST_STORE=postgres $(GO) test -count=1 -timeout 14m $(PGAPI) $(PGSYNC) >$$pglog 2>&1; echo $$? >$$pglog.rc) & \
	$(GO) test -count=1 -timeout 14m $(PKGS); sqlite=$$?; wait; \
	echo "== the black-box suites again, their hubs on PostgreSQL (KASSA_TEST_STORE=postgres)"; \
	cat $$pglog; pg=$$(cat $$pglog.rc); rm -f $$pglog $$pglog.rc; \
	test $$sqlite -eq 0 && test "$$pg" = 0

## chromium: Debian's chromium, which the KDS browser test drives headless
chromium:
	@bash deploy/ensure-chromium.sh

## compose-check: build the images, start deploy/compose.yaml (hub + two edges over TLS), sell at
## an edge, see it at the hub, tear down; skipped with its reason where no container runtime runs
compose-check:
	@bash deploy/compose-check.sh

## openapi-lint: Redocly lint (pinned, installed under tools/openapi) of the documents a hub and
## an edge serve; any warning fails
openapi-lint:
	@bash deploy/openapi-lint.sh

## openapi-client: after an API change, refresh clienttest/openapi/*.json from running nodes and
## regenerate the partner client (clienttest/kassaclient) with oapi-codegen
openapi-client:
	cd clienttest && $(GO) test -count=1 -run Snapshot . -update && $(GO) generate ./kassaclient

## bench: the benchmarks named in the issues, beside raw baselines from the same run
## (-p 1: one package at a time, or two packages' benchmarks share the CPUs)
bench:
	$(GO) test -p 1 -run '^$$' -bench . -benchtime 1x -timeout 20m $(PKGS)

## bench-ingest: the hub ingest bench alone (issue 25; docs/performance.md)
bench-ingest:
	KASSA_BENCH_ONLY=ingest $(GO) test -run '^$$' -bench BenchmarkIngest -benchtime 1x -timeout 10m ./hub/synctest/

## verify: does the demo edge hold exactly the hub's data in its scope? (make run must have run)
verify: build
	./bin/hub verify --data-dir data/hub --edge-data-dir data/edge

lint:
	@test -z "$$(gofmt -l shared sync edge hub web clienttest)" || (gofmt -l shared sync edge hub web clienttest; exit 1)
	$(GO) vet $(PKGS)

clean:
	rm -rf bin data
