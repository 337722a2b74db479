package kassa_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// mdLink is a Markdown link or image: its target up to a space or ")".
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)`)

// TestDocLinksResolve: every relative link in docs/*.md and the top-level
// README.md names a file or folder of the repository, so moving or
// renaming a doc cannot leave a dead link behind. Links to the web and
// to a place in the same page are not checked.
func TestDocLinksResolve(t *testing.T) {
	root := filepath.Join("..", "..")
	files, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	files = append(files, filepath.Join(root, "README.md"))
	if len(files) < 10 {
		t.Fatalf("found only %d docs; the glob is broken", len(files))
	}
	checked := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			target, _, _ := strings.Cut(m[1], "#")
			if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			if _, err := os.Stat(filepath.Join(filepath.Dir(f), target)); err != nil {
				rel, _ := filepath.Rel(root, f)
				t.Errorf("%s links to %s, which does not exist", rel, m[1])
			}
		}
	}
	if checked < 20 {
		t.Fatalf("checked only %d links; the pattern is broken", checked)
	}
}
