package hubnode

import (
	"crypto/tls"
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"kassa.dev/shared/node"
	"kassa.dev/sync/natsnode"
)

// ClusterSecretEnv is the environment variable that may carry the route
// secret instead of --cluster-secret-file (a flag's value shows in ps).
const ClusterSecretEnv = "KASSA_CLUSTER_SECRET"

// clusterFlags are the flags of a hub in a NATS cluster of hubs
// (docs/cluster.md).
type clusterFlags struct {
	listen, routes, name, secretFile, leafURLs string
}

func bindCluster(fs *flag.FlagSet) *clusterFlags {
	c := &clusterFlags{}
	fs.StringVar(&c.listen, "cluster-listen", "", "host:port of the NATS route listener other hubs connect to (empty: a lone hub, no cluster)")
	fs.StringVar(&c.routes, "cluster-routes", "", "host:port of the other hubs' route listeners, comma-separated")
	fs.StringVar(&c.name, "cluster-name", "kassa", "name of the NATS cluster, the same on every hub")
	fs.StringVar(&c.secretFile, "cluster-secret-file", "", "file holding the routes' shared secret (at least 32 characters; or "+ClusterSecretEnv+")")
	fs.StringVar(&c.leafURLs, "leaf-urls", "", "every hub's public leaf URL, comma-separated, given to edges to fail over among (default: this hub's own)")
	return c
}

// config is the cluster of the flags, nil for a lone hub. Routes are TLS
// when the hub has a certificate, verified against --tls-ca (or the
// system's roots).
func (c *clusterFlags) config(getenv func(string) string, tlsFiles node.TLSFiles, serverTLS *tls.Config) (*natsnode.Cluster, error) {
	if c.listen == "" {
		if c.routes != "" || c.secretFile != "" {
			return nil, fmt.Errorf("--cluster-routes and --cluster-secret-file need --cluster-listen")
		}
		return nil, nil
	}
	host, port, err := net.SplitHostPort(c.listen)
	p, perr := strconv.Atoi(port)
	if err != nil || perr != nil {
		return nil, fmt.Errorf("--cluster-listen %q: want host:port", c.listen)
	}
	secret := getenv(ClusterSecretEnv)
	if c.secretFile != "" {
		b, err := os.ReadFile(c.secretFile)
		if err != nil {
			return nil, fmt.Errorf("--cluster-secret-file: %w", err)
		}
		secret = strings.TrimSpace(string(b))
	}
	if len(secret) < natsnode.MinClusterSecret {
		return nil, fmt.Errorf("a cluster needs a secret of at least %d characters in --cluster-secret-file or %s",
			natsnode.MinClusterSecret, ClusterSecretEnv)
	}
	cl := &natsnode.Cluster{Name: c.name, Host: host, Port: p, Routes: splitList(c.routes), Secret: secret}
	if serverTLS != nil {
		client, err := tlsFiles.Client()
		if err != nil {
			return nil, err
		}
		cl.TLS = serverTLS.Clone()
		if client != nil {
			cl.TLS.RootCAs = client.RootCAs
		}
	}
	return cl, nil
}

// urls are the leaf URLs given to edges: --leaf-urls with own first, or own.
func (c *clusterFlags) urls(own string) []string {
	out := []string{own}
	for _, u := range splitList(c.leafURLs) {
		if u != own {
			out = append(out, u)
		}
	}
	return out
}

func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// leafCollector reports this hub's leaf connections, labelled with its name.
func leafCollector(ns func() *natsnode.Server, hub string) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "kassa_nats_leaf_connections",
		Help:        "Edges' leaf links up at this hub (each hub of a cluster reports its own).",
		ConstLabels: prometheus.Labels{"hub": hub}}, func() float64 {
		if s := ns(); s != nil {
			return float64(s.LeafConnections())
		}
		return 0
	})
}
