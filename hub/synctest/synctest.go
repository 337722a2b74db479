// Package synctest holds the end-to-end tests of edge-hub replication:
// real hub and edge nodes in-process, each with its own SQLite file and
// embedded NATS server, linked over loopback.
package synctest
