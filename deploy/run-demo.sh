#!/usr/bin/env bash
# Starts a hub seeded with the demo org and one edge enrolled at its demo
# location, each with its own SQLite file under ./data and its own embedded
# NATS server; the edge gets its data from the hub over the leaf link. Ctrl-C
# stops both cleanly. Every address, port and folder comes from the
# variables below (defaults as shown), so two demos run side by side:
#
#   HUB_ADDR=127.0.0.1:8090 EDGE_ADDR=127.0.0.1:8091 LEAF_PORT=7432 DATA_DIR=data2 deploy/run-demo.sh
#
# HUB_ADDR   the hub's HTTP address          (127.0.0.1:8080)
# EDGE_ADDR  the edge's HTTP address         (127.0.0.1:8081)
# LEAF_PORT  the hub's leaf-node port        (7422)
# DATA_DIR   the folder of both nodes' data  (data: data/hub, data/edge, data/*.log)
# BIN_DIR    where the hub and edge binaries are (bin, as `make build` puts them)
set -euo pipefail
cd "$(dirname "$0")/.."
umask 077 # the stores, their logs and the enrolment token are the user's only

HUB_ADDR=${HUB_ADDR:-127.0.0.1:8080}
EDGE_ADDR=${EDGE_ADDR:-127.0.0.1:8081}
LEAF_PORT=${LEAF_PORT:-7422}
DATA_DIR=${DATA_DIR:-data}
BIN_DIR=${BIN_DIR:-bin}
mkdir -p "$DATA_DIR"

# The hub seeds the demo org and writes an enrolment token for the demo
# location; the edge claims it on its first start and syncs from then on.
rm -f "$DATA_DIR/hub/demo-edge.token"
"$BIN_DIR/hub" --demo --http-addr "$HUB_ADDR" --data-dir "$DATA_DIR/hub" --leaf-port "$LEAF_PORT" 2>"$DATA_DIR/hub.log" &
hub=$!
edge=
for _ in $(seq 1 100); do
  [ -s "$DATA_DIR/hub/demo-edge.token" ] && break
  kill -0 "$hub" 2>/dev/null || { echo "the hub failed to start; see $DATA_DIR/hub.log"; exit 1; }
  sleep 0.1
done
"$BIN_DIR/edge" --http-addr "$EDGE_ADDR" --data-dir "$DATA_DIR/edge" \
  --hub-url "http://$HUB_ADDR" --enrol-token "$(cat "$DATA_DIR/hub/demo-edge.token")" 2>"$DATA_DIR/edge.log" &
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
    kill -0 "$hub" 2>/dev/null && kill -0 "$edge" 2>/dev/null || { echo "a node failed to start; see $DATA_DIR/*.log"; stop; exit 1; }
    sleep 0.1
  done
done

cat <<MSG

Kassa is running.
  hub   http://$HUB_ADDR   (API http://$HUB_ADDR/api/v1, OpenAPI http://$HUB_ADDR/api/v1/openapi.json)
  edge  http://$EDGE_ADDR  (API http://$EDGE_ADDR/api/v1)
  leaf  nats-leaf://127.0.0.1:$LEAF_PORT
  data  $DATA_DIR/hub, $DATA_DIR/edge
  logs  $DATA_DIR/hub.log, $DATA_DIR/edge.log

Sync:  curl -s http://$EDGE_ADDR/api/v1/sync/status -H "Authorization: Bearer <manager token>"
Logins (password kassa-demo): owner@demo.test manager@demo.test cashier@demo.test kitchen@demo.test
Try:  curl -s -XPOST http://$EDGE_ADDR/api/v1/auth/login -d '{"email":"cashier@demo.test","password":"kassa-demo"}'

Press Ctrl-C to stop both.
MSG
wait "$hub" "$edge"
