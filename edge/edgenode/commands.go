package edgenode

import "kassa.dev/shared/node"

// DefaultHTTPAddr is the edge's listen address when --http-addr is not given.
const DefaultHTTPAddr = "127.0.0.1:8081"

// DefaultDataDir is the edge's data directory when --data-dir is not given.
const DefaultDataDir = "data/edge"

// Commands are the edge binary's subcommands besides running the edge:
// backup (of a running edge's store), restore (into a stopped edge's data
// directory) and healthcheck. See docs/deploy.md.
var Commands = node.Commands(DefaultDataDir, DefaultHTTPAddr, node.RestoreEdge, nil)
