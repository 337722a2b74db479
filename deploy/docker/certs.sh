#!/bin/sh
# certs: makes, once, a CA and the certificates of the compose setup in $1
# (the "certs" volume): hub (names hub, hub1-hub3 — the cluster file's three
# hubs share it —, localhost, 127.0.0.1) and edge1,
# edge2 (their own names, localhost). The nodes run as uid 10001: the keys
# are theirs, readable by nobody else. Runs in alpine (openssl).
set -eu
dir=${1:-/certs}
if [ -s "$dir/ca.crt" ] && [ -s "$dir/hub.crt" ] && [ -s "$dir/edge2.crt" ]; then
	echo "certs: present in $dir"
	exit 0
fi
command -v openssl >/dev/null || apk add --no-cache openssl >/dev/null
cd "$dir"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 825 \
	-subj "/CN=Kassa compose CA" -keyout ca.key -out ca.crt 2>/dev/null
for name in hub edge1 edge2; do
	san="DNS:$name,DNS:localhost,IP:127.0.0.1"
	[ "$name" = hub ] && san="DNS:hub,DNS:hub1,DNS:hub2,DNS:hub3,DNS:localhost,IP:127.0.0.1"
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$name" \
		-keyout "$name.key" -out "$name.csr" 2>/dev/null
	printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\n' "$san" >"$name.ext"
	openssl x509 -req -in "$name.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 825 \
		-extfile "$name.ext" -out "$name.crt" 2>/dev/null
	rm -f "$name.csr" "$name.ext"
done
rm -f ca.key ca.srl # no more certificates are signed here
chown 10001:10001 ./*.key ./*.crt
chmod 600 ./*.key
chmod 644 ./*.crt
echo "certs: CA and certificates of hub, edge1, edge2 written to $dir"
