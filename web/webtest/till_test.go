package webtest

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestPollWaitsThroughARedrawnElement: a page that draws the element
// the test waits for only after a while, and takes it away and draws it
// again as it re-renders (the till's print jobs): Poll sees the final
// text instead of failing at the first moment the element was missing
// (the till test's "a second print" flake).
func TestPollWaitsThroughARedrawnElement(t *testing.T) {
	page := `<!doctype html><ul id="jobs"></ul><script>
const draw = (text) => { const li = document.createElement('li'); li.textContent = text; document.getElementById('jobs').replaceChildren(li); };
setTimeout(() => draw('printing'), 100);
setTimeout(() => document.getElementById('jobs').replaceChildren(), 200);
setTimeout(() => draw('printed (2 copies)'), 400);
</script>`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(page))
	}))
	defer srv.Close()
	c := &Cashier{T: t, B: Start(t, ChromiumPath(t), 800, 600)}
	c.Do("the page", chromedp.Navigate(srv.URL))
	c.Poll("two copies", `document.querySelector('#jobs li').textContent.includes('2 copies')`)
}
