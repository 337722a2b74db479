// Package web embeds Kassa's browser pages (KDS screen, store console, ops
// monitor, OAuth consent page) so that each binary ships as one file. The
// pages are plain HTML, CSS and JavaScript: no build step, nothing fetched
// from the internet, so they work on a store LAN that is offline.
package web

import (
	"embed"
	"errors"
	"io/fs"
)

// FS holds the pages under static/.
//
//go:embed static
var FS embed.FS

// KDS is the kitchen display page (static/kds), which the edge serves at
// /kds: index.html, kds.css and kds.js.
var KDS = page("static/kds")

// Console is the store console (static/console), which the edge serves at
// /console: the state of its sync link for the store's manager.
var Console = page("static/console")

// Terminal is the till's live view (static/terminal), which the edge
// serves at /terminal: open orders and stock of the location, updated
// over GET /api/v1/ws.
var Terminal = page("static/terminal")

// Till is the point of sale (static/till), which the edge serves at
// /till: a cashier rings up sales, takes payments and refunds over the
// edge's API, with the internet down too (docs/till.md).
var Till = page("static/till")

// Ops is the ops monitor (static/ops), which the hub serves at /ops: every
// edge of the org, live over the hub's /api/v1/sync/ws feed, and the open
// sync conflicts with their actions.
var Ops = page("static/ops")

// OAuth is the consent page of the hub's authorization server
// (static/oauth): authorize.html, an html/template the hub renders at
// /oauth/authorize (error, sign-in and consent views), and consent.css.
var OAuth = mustSub("static/oauth")

// common holds what every page loads beside its own files (session.js:
// sign-in, token pair, REST with refresh once), so each page's fs.FS
// serves it as <page>/session.js without a route of its own.
var common = mustSub("static/common")

// page is a page's directory overlaid on static/common: a name the page
// has is its own, any other is looked up in common.
func page(dir string) fs.FS { return overlay{mustSub(dir), common} }

type overlay struct{ own, common fs.FS }

func (o overlay) Open(name string) (fs.File, error) {
	f, err := o.own.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return o.common.Open(name)
	}
	return f, err
}

func mustSub(dir string) fs.FS {
	sub, err := fs.Sub(FS, dir)
	if err != nil {
		panic(err)
	}
	return sub
}
