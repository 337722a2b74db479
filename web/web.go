// Package web embeds Kassa's browser pages (KDS screen, store console, ops
// monitor, OAuth consent page) so that each binary ships as one file. The
// pages land with their issues; FS is empty until then.
package web

import "embed"

// FS holds the pages under static/.
//
//go:embed static
var FS embed.FS
