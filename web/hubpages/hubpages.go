// Package hubpages embeds the pages only the hub serves: the ops monitor
// and the OAuth consent page. Only the hub's main imports it, so the edge
// binary carries neither (edge/layout_test.go holds that).
package hubpages

import (
	"embed"
	"io/fs"

	"kassa.dev/web"
)

//go:embed ops oauth reports
var files embed.FS

// Ops is the ops monitor (ops/), which the hub serves at /ops: every edge
// of the org, live over the hub's /api/v1/sync/ws feed, and the open sync
// conflicts with their actions. It serves the shared scripts as its own
// (web.Page).
var Ops = web.Page(sub("ops"))

// Reports is the head office's reports page (reports/), served at
// /reports: sign-in (page.js) and every report of every store, or of one,
// as a table, a chart of sales and the API's CSV, drawn by the shared
// reports view (static/common/reports.js, web.Page).
var Reports = web.Page(sub("reports"))

// OAuth is the consent page of the hub's authorization server (oauth/):
// authorize.html, an html/template the hub renders at /oauth/authorize
// (error, sign-in and consent views), and consent.css.
var OAuth = sub("oauth")

func sub(dir string) fs.FS {
	s, err := fs.Sub(files, dir)
	if err != nil {
		panic(err)
	}
	return s
}
