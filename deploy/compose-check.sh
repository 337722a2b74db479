#!/usr/bin/env bash
# compose-check: builds both images, starts deploy/compose.yaml (a hub and
# two edges over TLS), waits for health, checks through the hub's
# /api/v1/sync/status that both edges are connected, makes a sale at edge1
# and sees it at the hub, then removes everything (down -v). Where there is
# no container runtime it says so and succeeds: `make test` calls it.
# Needs docker with the compose plugin, curl and python3 (JSON).
set -euo pipefail
cd "$(dirname "$0")"

skipped() { # skipped REASON: says why, points to the rehearsal, succeeds
	echo "compose-check: skipped — $1"
	echo "compose-check: the host rehearsal of the same setup runs in go test (TestComposeRehearsalWithoutContainers, hub/synctest)"
	exit 0
}
if ! info=$(docker info 2>&1); then
	skipped "no container runtime (docker info: $(printf '%s\n' "$info" | grep -v '^[[:space:]]*$' | tail -n 1 | sed 's/^[[:space:]]*//'))"
fi
if ! docker compose version >/dev/null 2>&1; then
	skipped "no docker compose plugin (docker compose version failed)"
fi

project="kassa-check-$$"
export KASSA_OPERATOR_TOKEN KASSA_OWNER_PASSWORD KASSA_OWNER_EMAIL=owner@kassa.example
KASSA_OPERATOR_TOKEN=$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')
KASSA_OWNER_PASSWORD=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
dc() { docker compose -p "$project" -f compose.yaml "$@"; }
tmp=$(mktemp -d)
cleanup() {
	dc down -v --remove-orphans >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
	echo "compose-check: FAILED — $*" >&2
	dc ps -a >&2 || true
	dc logs --tail 50 >&2 || true
	exit 1
}
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1], {'d': d}))" "$1"; }
# until SECONDS WHAT CMD…: runs CMD until it succeeds or SECONDS pass.
until_ok() {
	local deadline=$((SECONDS + $1)) what=$2
	shift 2
	until "$@" >/dev/null 2>&1; do
		((SECONDS < deadline)) || fail "timed out waiting for $what"
		sleep 1
	done
}

dc build
dc up -d
healthy() { [ "$(docker inspect -f '{{.State.Health.Status}}' "$(dc ps -q "$1")")" = healthy ]; }
for s in hub edge1 edge2; do
	until_ok 180 "$s healthy" healthy "$s"
done
dc cp hub:/certs/ca.crt "$tmp/ca.crt" >/dev/null
call() { # call URL METHOD PATH [TOKEN] [BODY]
	curl -fsS --cacert "$tmp/ca.crt" -X "$2" "$1/api/v1$3" -H 'Content-Type: application/json' \
		${4:+-H "Authorization: Bearer $4"} ${5:+-d "$5"}
}
hub=https://localhost:8443 edge1=https://localhost:8081
login="{\"email\": \"$KASSA_OWNER_EMAIL\", \"password\": \"$KASSA_OWNER_PASSWORD\"}"
owner=$(call $hub POST /auth/login "" "$login" | json "d['data']['accessToken']")

connected() { [ "$(call $hub GET /sync/status "$owner" | json "sum(1 for e in d['data']['edges'] if e['connected'])")" = 2 ]; }
until_ok 120 "both edges connected at the hub" connected
echo "compose-check: hub and both edges healthy, both edges connected over TLS"

product=$(call $hub POST /catalog/products "$owner" '{"name": "Check coffee", "sku": "CHECK-1", "base_price": 250}' | json "d['data']['id']")
until_ok 60 "the owner at edge1" call $edge1 POST /auth/login "" "$login"
at_edge=$(call $edge1 POST /auth/login "" "$login" | json "d['data']['accessToken']")
until_ok 60 "the product at edge1" call $edge1 GET "/catalog/products/$product" "$at_edge"
loc=$(call $edge1 GET /locations "$at_edge" | json "d['data'][0]['id']")
order=$(call $edge1 POST /orders "$at_edge" "{\"location_id\": \"$loc\", \"line_items\": [{\"product_id\": \"$product\", \"quantity\": 1}]}")
id=$(printf '%s' "$order" | json "d['data']['id']")
total=$(printf '%s' "$order" | json "d['data']['total']")
call $edge1 POST /payments/initiate "$at_edge" "{\"order_id\": \"$id\", \"amount\": $total, \"method\": \"cash\"}" >/dev/null
call $edge1 POST "/orders/$id/complete" "$at_edge" >/dev/null
completed() { [ "$(call $hub GET "/orders/$id" "$owner" | json "d['data']['status']")" = completed ]; }
until_ok 60 "the sale at the hub" completed
echo "compose-check: ok — a sale at edge1 reached the hub"
