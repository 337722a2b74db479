package web_test

import (
	"errors"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"testing"

	"kassa.dev/web"
	"kassa.dev/web/hubpages"
)

// The pages are served with a Content-Security-Policy that allows only
// script and style files of their own origin (package httpapi, cspPage):
// an inline script, style or event handler would silently not run in the
// browser. This test finds one before a browser does.
var inline = []struct {
	what string
	re   *regexp.Regexp
}{
	{"an inline <script>", regexp.MustCompile(`(?is)<script\b[^>]*>\s*[^<\s]`)},
	{"an inline <style>", regexp.MustCompile(`(?is)<style\b`)},
	{"a style attribute", regexp.MustCompile(`(?is)<[a-z][^>]*\sstyle\s*=`)},
	{"an event handler attribute", regexp.MustCompile(`(?is)<[a-z][^>]*\son[a-z]+\s*=`)},
	{"a javascript: URL", regexp.MustCompile(`(?i)javascript:`)},
}

var scriptTag = regexp.MustCompile(`(?is)<script\b[^>]*>`)

func TestPagesHaveNoInlineScriptOrStyle(t *testing.T) {
	pages := os.DirFS(".") // static/ (web.FS) and hubpages/ (the hub's)
	err := fs.WalkDir(pages, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".html") && !strings.HasSuffix(path, ".js") {
			return err
		}
		b, err := fs.ReadFile(pages, path)
		if err != nil {
			return err
		}
		if strings.HasSuffix(path, ".html") {
			for _, tag := range scriptTag.FindAll(b, -1) {
				if !strings.Contains(string(tag), "src=") {
					t.Errorf("%s has a <script> without src: %s", path, tag)
				}
			}
		}
		for _, in := range inline {
			if strings.HasSuffix(path, ".js") && in.what != "a style attribute" && in.what != "an event handler attribute" {
				continue // markup written by script
			}
			if loc := in.re.FindIndex(b); loc != nil {
				t.Errorf("%s has %s: %q", path, in.what, b[loc[0]:min(loc[1]+20, len(b))])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Every page that signs in serves the shared session script beside its own
// files, and its index.html loads it before the page's own script; the ops
// monitor and the console also load the shared format.js.
func TestPagesServeTheSharedSession(t *testing.T) {
	want, err := fs.ReadFile(web.FS, "static/common/session.js")
	if err != nil {
		t.Fatal(err)
	}
	for name, page := range map[string]fs.FS{"kds": web.KDS, "console": web.Console, "terminal": web.Terminal, "till": web.Till, "ops": hubpages.Ops} {
		got, err := fs.ReadFile(page, "session.js")
		if err != nil || string(got) != string(want) {
			t.Errorf("%s/session.js: %v, %d bytes, want the shared script", name, err, len(got))
		}
		index, err := fs.ReadFile(page, "index.html")
		if err != nil {
			t.Fatal(err)
		}
		s, own := strings.Index(string(index), `src="/`+name+`/session.js"`), strings.Index(string(index), `src="/`+name+`/`+name+`.js"`)
		if s < 0 || own < 0 || s > own {
			t.Errorf("%s/index.html does not load session.js before %s.js", name, name)
		}
		if name == "ops" || name == "console" {
			if _, err := fs.ReadFile(page, "format.js"); err != nil || !strings.Contains(string(index), `src="/`+name+`/format.js"`) {
				t.Errorf("%s does not serve and load format.js: %v", name, err)
			}
		}
		if _, err := fs.ReadFile(page, "nothing.js"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s/nothing.js: %v, want not found", name, err)
		}
	}
}

// The console's reports section and the hub's /reports page are one view
// (static/common/reports.js and reports.css): each page serves the shared
// files (none of its own shadows them), loads them, and holds only the
// empty section the view fills, never a copy of its form.
func TestReportsPagesShareOneView(t *testing.T) {
	for route, page := range map[string]fs.FS{"console": web.Console, "reports": hubpages.Reports} {
		for _, f := range []string{"reports.js", "reports.css"} {
			want, err := fs.ReadFile(web.FS, "static/common/"+f)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := fs.ReadFile(page, f); err != nil || string(got) != string(want) {
				t.Errorf("/%s/%s: %v, %d bytes, want the shared file", route, f, err, len(got))
			}
		}
		index, err := fs.ReadFile(page, "index.html")
		if err != nil {
			t.Fatal(err)
		}
		html := string(index)
		if !strings.Contains(html, `src="/`+route+`/reports.js"`) || !strings.Contains(html, `href="/`+route+`/reports.css"`) ||
			!strings.Contains(html, " data-reports") || strings.Contains(html, "report-form") {
			t.Errorf("/%s/index.html: want reports.js, reports.css and an empty data-reports section, no copy of the form", route)
		}
	}
}
