// Package web embeds Kassa's browser pages (KDS screen, store console, ops
// monitor, OAuth consent page) so that each binary ships as one file. The
// pages are plain HTML, CSS and JavaScript: no build step, nothing fetched
// from the internet, so they work on a store LAN that is offline.
package web

import (
	"embed"
	"io/fs"
)

// FS holds the pages under static/.
//
//go:embed static
var FS embed.FS

// KDS is the kitchen display page (static/kds), which the edge serves at
// /kds: index.html, kds.css and kds.js.
var KDS = mustSub("static/kds")

// Console is the store console (static/console), which the edge serves at
// /console: the state of its sync link for the store's manager.
var Console = mustSub("static/console")

// Terminal is the till's live view (static/terminal), which the edge
// serves at /terminal: open orders and stock of the location, updated
// over GET /api/v1/ws.
var Terminal = mustSub("static/terminal")

// Ops is the ops monitor (static/ops), which the hub serves at /ops: every
// edge of the org, live over the hub's /api/v1/sync/ws feed, and the open
// sync conflicts with their actions.
var Ops = mustSub("static/ops")

// OAuth is the consent page of the hub's authorization server
// (static/oauth): authorize.html, an html/template the hub renders at
// /oauth/authorize (error, sign-in and consent views), and consent.css.
var OAuth = mustSub("static/oauth")

func mustSub(dir string) fs.FS {
	sub, err := fs.Sub(FS, dir)
	if err != nil {
		panic(err)
	}
	return sub
}
