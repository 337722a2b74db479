package node

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"kassa.dev/shared/envflag"
)

// HealthCommand runs `healthcheck`: it GETs the node's /healthz on
// loopback and fails unless the answer is 200, for container
// HEALTHCHECKs (the runtime image has no curl). It reads the node's own
// settings (--http-addr, --tls-cert, also as KASSA_* variables): with a
// certificate it speaks HTTPS and trusts exactly that certificate.
func HealthCommand(ctx context.Context, args []string, getenv func(string) string, defaultAddr string, out io.Writer) error {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	fs.SetOutput(out)
	addr := fs.String("http-addr", defaultAddr, "the node's HTTP listen address")
	cert := fs.String("tls-cert", "", "the node's PEM certificate, when it serves HTTPS")
	timeout := fs.Duration("timeout", 3*time.Second, "how long to wait for the answer")
	if err := envflag.Parse(fs, args, "KASSA_", getenv); err != nil {
		return err
	}
	_, port, err := net.SplitHostPort(*addr)
	if err != nil {
		return fmt.Errorf("healthcheck: --http-addr %q: %w", *addr, err)
	}
	client := &http.Client{Timeout: *timeout}
	url := "http://" + net.JoinHostPort("127.0.0.1", port) + "/healthz"
	if *cert != "" {
		pinned, err := certDER(*cert)
		if err != nil {
			return err
		}
		url = "https://" + net.JoinHostPort("127.0.0.1", port) + "/healthz"
		client.Transport = &http.Transport{TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12,
			// The server is this node on loopback: trust its own
			// certificate, whatever names it carries.
			InsecureSkipVerify: true,
			VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
				if len(raw) == 0 || !bytes.Equal(raw[0], pinned) {
					return errors.New("healthcheck: the server's certificate is not --tls-cert")
				}
				return nil
			}}}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	res, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer res.Body.Close()
	io.Copy(io.Discard, io.LimitReader(res.Body, 4096))
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %d", url, res.StatusCode)
	}
	fmt.Fprintln(out, "healthy")
	return nil
}

// certDER reads the first certificate of a PEM file.
func certDER(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("healthcheck: %w", err)
	}
	for {
		var blk *pem.Block
		if blk, b = pem.Decode(b); blk == nil {
			return nil, fmt.Errorf("healthcheck: no certificate in %s", path)
		}
		if blk.Type == "CERTIFICATE" {
			return blk.Bytes, nil
		}
	}
}
