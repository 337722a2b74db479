// Package web embeds Kassa's browser pages (KDS screen, store console,
// terminal, till) and the scripts every page shares, so that each binary
// ships as one file. The pages are plain HTML, CSS and JavaScript: no
// build step, nothing fetched from the internet, so they work on a store
// LAN that is offline. The hub's own pages (the ops monitor, the OAuth
// consent page) are package hubpages, which the edge never imports.
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

// common holds what every page loads beside its own files (session.js:
// sign-in, token pair, REST with refresh once), so each page's fs.FS
// serves it as <page>/session.js without a route of its own.
var common = mustSub("static/common")

// page is a page's directory overlaid on static/common (Page).
func page(dir string) fs.FS { return Page(mustSub(dir)) }

// Page is a page's own files overlaid on static/common: a name the page
// has is its own, any other is looked up in common (session.js,
// format.js), so each page's fs.FS serves them without a route of its own.
func Page(own fs.FS) fs.FS { return overlay{own, common} }

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
