package envflag

import (
	"flag"
	"testing"
)

func TestCommandLineWinsOverEnvironment(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	addr := fs.String("http-addr", "127.0.0.1:1", "")
	port := fs.Int("nats-port", 1, "")
	env := map[string]string{"KASSA_HTTP_ADDR": "127.0.0.1:9", "KASSA_NATS_PORT": "4333"}
	if err := Parse(fs, []string{"-http-addr", "127.0.0.1:2"}, "KASSA_", func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if *addr != "127.0.0.1:2" || *port != 4333 {
		t.Fatalf("addr=%s port=%d", *addr, *port)
	}
	env["KASSA_NATS_PORT"] = "not-a-number"
	fs = flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Int("nats-port", 1, "")
	if err := Parse(fs, nil, "KASSA_", func(k string) string { return env[k] }); err == nil {
		t.Fatal("bad environment value accepted")
	}
}
