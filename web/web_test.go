package web

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"
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
	err := fs.WalkDir(FS, "static", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".html") && !strings.HasSuffix(path, ".js") {
			return err
		}
		b, err := fs.ReadFile(FS, path)
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
