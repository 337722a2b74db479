package node

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
)

// TLSFiles are the PEM files named by --tls-cert, --tls-key and --tls-ca.
type TLSFiles struct {
	Cert, Key, CA string
}

// Server is the server side of TLS (HTTPS, the hub's leaf listener), or
// nil when no certificate is configured.
func (t TLSFiles) Server() (*tls.Config, error) {
	if t.Cert == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(t.Cert, t.Key)
	if err != nil {
		return nil, fmt.Errorf("tls: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// Client is the client side of TLS verifying peers against the CA, or nil
// when no CA is configured (the system's roots then apply to https URLs).
func (t TLSFiles) Client() (*tls.Config, error) {
	if t.CA == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(t.CA)
	if err != nil {
		return nil, fmt.Errorf("tls: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("tls: no certificate in %s", t.CA)
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}
