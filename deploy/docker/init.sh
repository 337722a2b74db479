#!/bin/sh
# init: sets the compose hub up once, through its API — the org (a tenant,
# with the operator token), its owner, two locations — and puts one
# single-use enrolment token per edge into the "tokens" volume
# (/tokens/edge1.token, /tokens/edge2.token), readable by the nodes' user
# only. An edge passes its token at every start; once enrolled it ignores
# it. Runs in alpine (curl, jq). Start over with `docker compose down -v`.
# KASSA_CERTS_DIR and KASSA_TOKENS_DIR (default /certs, /tokens) move the
# volumes, for the rehearsal without containers (hub/synctest).
set -eu
certs=${KASSA_CERTS_DIR:-/certs}
tokens=${KASSA_TOKENS_DIR:-/tokens}
if [ -s "$tokens/edge1.token" ] && [ -s "$tokens/edge2.token" ]; then
	echo "init: done before"
	exit 0
fi
command -v jq >/dev/null || apk add --no-cache curl jq >/dev/null
hub=${KASSA_HUB_URL:-https://hub:8443}
api() { # api METHOD PATH TOKEN [BODY]
	curl -fsS --cacert "$certs/ca.crt" -X "$1" "$hub/api/v1$2" -H "Authorization: Bearer $3" \
		-H 'Content-Type: application/json' ${4:+-d "$4"}
}
# field FILTER: FILTER of the JSON answer on stdin, failing when there is
# none: jq 1.6 exits 0 on empty input, so a failed call would go on.
field() { jq -er "$1" | grep .; }
body=$(jq -n --arg email "$KASSA_OWNER_EMAIL" --arg pw "$KASSA_OWNER_PASSWORD" --arg cur "${KASSA_CURRENCY:-EUR}" --arg tz "${KASSA_TIMEZONE:-Europe/Berlin}" \
	'{name: "Kassa compose", currency: $cur, owner: {email: $email, name: "Owner", password: $pw}, location: {name: "Store 1", timezone: $tz}}')
loc1=$(api POST /partners/tenants "$KASSA_OPERATOR_TOKEN" "$body" | field .data.location.id)
login=$(jq -n --arg email "$KASSA_OWNER_EMAIL" --arg pw "$KASSA_OWNER_PASSWORD" '{email: $email, password: $pw}')
owner=$(curl -fsS --cacert "$certs/ca.crt" -X POST "$hub/api/v1/auth/login" -H 'Content-Type: application/json' -d "$login" | field .data.accessToken)
loc2=$(api POST /locations "$owner" "{\"name\": \"Store 2\", \"timezone\": \"${KASSA_TIMEZONE:-Europe/Berlin}\"}" | field .data.id)
for pair in "edge1 $loc1" "edge2 $loc2"; do
	set -- $pair
	umask 077
	api POST "/locations/$2/enrolment" "$owner" | field .data.token >"$tokens/$1.token.tmp"
	chown 10001:10001 "$tokens/$1.token.tmp"
	mv "$tokens/$1.token.tmp" "$tokens/$1.token"
done
echo "init: org, owner $KASSA_OWNER_EMAIL, locations $loc1 $loc2; enrolment tokens in $tokens"
