package synctest

import (
	"net/url"
	"strings"
	"testing"

	"kassa.dev/edge/edgenode"
	"kassa.dev/hub/hubnode"
	"kassa.dev/shared/node/nodetest"
	"kassa.dev/sync/tlstest"
)

// TestHealthcheckCommandAnswersForARunningNodeOnly runs the binaries'
// healthcheck subcommand (the containers' HEALTHCHECK) with the node's own
// environment: it passes against a hub serving HTTPS and an edge serving
// HTTP, and fails once the node is gone or for a certificate that is not
// the node's.
func TestHealthcheckCommandAnswersForARunningNodeOnly(t *testing.T) {
	certs := tlstest.New(t)
	other := tlstest.New(t)
	hub := nodetest.Start(t, hubnode.Run, nil, "--http-addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--leaf-port", "-1",
		"--tls-cert", certs.CertFile, "--tls-key", certs.KeyFile)
	edge := nodetest.Start(t, edgenode.Run, nil, "--http-addr", "127.0.0.1:0", "--data-dir", t.TempDir())
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	host := func(p *nodetest.Proc) string { u, _ := url.Parse(p.URL); return "0.0.0.0:" + u.Port() }
	var out strings.Builder
	if err := hubnode.Commands["healthcheck"](t.Context(), nil, env("KASSA_HTTP_ADDR", host(hub), "KASSA_TLS_CERT", certs.CertFile), &out); err != nil {
		t.Fatalf("hub healthcheck: %v", err)
	}
	if err := hubnode.Commands["healthcheck"](t.Context(), nil, env("KASSA_HTTP_ADDR", host(hub), "KASSA_TLS_CERT", other.CertFile), &out); err == nil {
		t.Fatal("healthcheck trusted a certificate that is not the hub's")
	}
	if err := edgenode.Commands["healthcheck"](t.Context(), []string{"--http-addr", host(edge)}, noEnv, &out); err != nil {
		t.Fatalf("edge healthcheck: %v", err)
	}
	addr := host(edge)
	edge.Stop(t)
	if err := edgenode.Commands["healthcheck"](t.Context(), []string{"--http-addr", addr}, noEnv, &out); err == nil {
		t.Fatal("healthcheck passed for a stopped edge")
	}
}
