#!/usr/bin/env bash
# Starts a hub seeded with the demo org and one edge enrolled at its demo
# location, each with its own SQLite file under ./data and its own embedded
# NATS server; the edge gets its data from the hub over the leaf link. Ctrl-C
# stops both cleanly. Addresses and ports come from KASSA_* variables
# (see README.md); the defaults are the ones below.
set -euo pipefail
cd "$(dirname "$0")/.."

HUB_ADDR=${HUB_ADDR:-127.0.0.1:8080}
EDGE_ADDR=${EDGE_ADDR:-127.0.0.1:8081}
mkdir -p data

# The hub seeds the demo org and writes an enrolment token for the demo
# location; the edge claims it on its first start and syncs from then on.
rm -f data/hub/demo-edge.token
./bin/hub --demo --http-addr "$HUB_ADDR" --data-dir data/hub --leaf-port 7422 2>data/hub.log &
hub=$!
edge=
for _ in $(seq 1 100); do
  [ -s data/hub/demo-edge.token ] && break
  kill -0 "$hub" 2>/dev/null || { echo "the hub failed to start; see data/hub.log"; exit 1; }
  sleep 0.1
done
./bin/edge --http-addr "$EDGE_ADDR" --data-dir data/edge \
  --hub-url "http://$HUB_ADDR" --enrol-token "$(cat data/hub/demo-edge.token)" 2>data/edge.log &
edge=$!

stop() {
  trap - INT TERM
  kill -TERM "$hub" "$edge" 2>/dev/null || true
  wait "$hub" "$edge" 2>/dev/null || true
  echo "stopped hub and edge"
}
trap "stop; exit 0" INT TERM

for url in "http://$HUB_ADDR/readyz" "http://$EDGE_ADDR/readyz"; do
  for _ in $(seq 1 100); do
    curl -fsS "$url" >/dev/null 2>&1 && break
    kill -0 "$hub" 2>/dev/null && kill -0 "$edge" 2>/dev/null || { echo "a node failed to start; see data/*.log"; stop; exit 1; }
    sleep 0.1
  done
done

cat <<MSG

Kassa is running.
  hub   http://$HUB_ADDR   (API http://$HUB_ADDR/api/v1, OpenAPI http://$HUB_ADDR/api/v1/openapi.json)
  edge  http://$EDGE_ADDR  (API http://$EDGE_ADDR/api/v1)
  logs  data/hub.log, data/edge.log

Sync:  curl -s http://$EDGE_ADDR/api/v1/sync/status -H "Authorization: Bearer <manager token>"
Logins (password kassa-demo): owner@demo.test manager@demo.test cashier@demo.test kitchen@demo.test
Try:  curl -s -XPOST http://$EDGE_ADDR/api/v1/auth/login -d '{"email":"cashier@demo.test","password":"kassa-demo"}'

Press Ctrl-C to stop both.
MSG
wait "$hub" "$edge"
