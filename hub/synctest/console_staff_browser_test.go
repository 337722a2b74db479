package synctest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"kassa.dev/shared/demo"
	"kassa.dev/sync/wait"
	"kassa.dev/web/webtest"
)

// TestConsoleStaffWithTheHubLinkCut drives the edge console's staff
// section in headless Chromium at an edge enrolled at a real hub, with the
// edge's leaf link cut: the console says OFFLINE, and the store's manager
// still adds a cashier of the store with a PIN, renames her, deactivates
// and reactivates her (clicks and typed keys only). The store's other
// staff show as managed by an owner, not editable here. The edge holds her
// at once; the link comes back and the hub admits every change (her name,
// role, location, PIN), nothing refused or quarantined, and she signs in
// at the hub. Screenshot console-staff-offline.png.
func TestConsoleStaffWithTheHubLinkCut(t *testing.T) {
	chromium := webtest.ChromiumPath(t)
	e := MustStartPair(t)
	userAt := func(p interface {
		Call(testing.TB, string, string, string, any, any) int
	}, tok, email string) map[string]any {
		t.Helper()
		var l listResp
		p.Call(t, "GET", "/api/v1/users?limit=200", tok, nil, &l)
		for _, u := range l.Data {
			if u["email"] == email {
				return u
			}
		}
		return nil
	}

	b := webtest.Start(t, chromium, 1024, 768)
	c := webtest.NewCashier(t, b)
	row := `#staff-rows tr[data-email="oona@demo.test"]`
	act := func(what string) string { return row + fmt.Sprintf(` button[data-act="%s"]`, what) }
	done := func(what string) {
		t.Helper()
		c.Poll(what, `!document.getElementById('staff-dlg').open && document.getElementById('staff-msg').textContent.includes(`+fmt.Sprintf("%q", what)+`)`)
	}
	c.Do("a back-office screen", chromedp.EmulateViewport(1024, 768))
	c.Do("log in", chromedp.Navigate(e.edge.URL+"/console"), chromedp.WaitVisible("#login"), chromedp.SendKeys("#email", "manager@demo.test"),
		chromedp.SendKeys("#password", demo.Password), chromedp.Click("#login-btn"), chromedp.WaitVisible(`#staff-rows tr[data-email="cashier@demo.test"]`))
	e.proxy.cut()
	c.Poll("offline", `document.getElementById('status').dataset.state === 'offline'`)

	c.Do("add", chromedp.Click("#staff-add"), chromedp.WaitVisible("#staff-email"),
		chromedp.SendKeys("#staff-name", "Oona Offline"), chromedp.SendKeys("#staff-email", "oona@demo.test"),
		chromedp.SendKeys("#staff-password", "outage-pass-1"), chromedp.SendKeys("#staff-pin", "9753"), chromedp.Click("#staff-ok"))
	done("Added Oona Offline (Cashier, ")
	if got := c.Text("#staff-msg"); !strings.Contains(got, "Saved at this store: head office gets it when the link is back.") {
		t.Fatalf("offline the console says %q", got)
	}
	c.Click("edit", act("edit"))
	c.Do("the edit dialog", chromedp.WaitVisible("#staff-name"))
	c.Retype("#staff-name", "Oona Outage")
	c.Do("save", chromedp.Click("#staff-ok"))
	done("Saved Oona Outage.")
	c.Click("deactivate", act("deactivate")) // the list is drawn again after the save
	c.Do("confirm", chromedp.WaitVisible("#staff-ok"), chromedp.Click("#staff-ok"))
	done("Oona Outage is deactivated")
	c.Click("reactivate", act("reactivate"))
	c.Do("reactivated", chromedp.WaitVisible(act("deactivate")))
	c.Do("scroll to the staff", chromedp.ScrollIntoView("#staff"))
	c.Shot("console-staff-offline")
	if got := c.Text(`#staff-rows tr[data-email="cashier@demo.test"]`); !strings.Contains(got, "Managed by an owner") {
		t.Fatalf("at the store the demo cashier of every location says %q", got)
	}
	if got := c.Text("#status-text"); !strings.HasPrefix(got, "OFFLINE") {
		t.Fatalf("the banner says %q while the link is cut", got)
	}
	at := userAt(e.edge, e.edgeMgr, "oona@demo.test")
	if at == nil || at["name"] != "Oona Outage" || at["is_active"] != true || at["has_pin"] != true ||
		fmt.Sprint(at["location_ids"]) != "["+e.location+"]" {
		t.Fatalf("the offline edge holds %v", at)
	}
	if userAt(e.hub, e.hubTok, "oona@demo.test") != nil {
		t.Fatal("the hub has the cashier while the link is cut")
	}

	e.proxy.restore()
	wait.For(t, 60*time.Second, "the hub admits the store's cashier", func() bool {
		u := userAt(e.hub, e.hubTok, "oona@demo.test")
		return u != nil && u["name"] == "Oona Outage" && u["role"] == "cashier" && u["is_active"] == true && u["has_pin"] == true &&
			fmt.Sprint(u["location_ids"]) == "["+e.location+"]"
	})
	waitPushed(t, e)
	c.Poll("the console says nothing was refused", `document.getElementById('status').dataset.state !== 'offline' &&
		document.getElementById('status').dataset.refused === '0'`)
	noQuarantine(t, e)
	if st := e.hub.Call(t, "POST", "/api/v1/auth/login", "", map[string]any{"email": "oona@demo.test", "password": "outage-pass-1"}, nil); st != 200 {
		t.Fatalf("the store's cashier signs in at the hub: %d", st)
	}
	c.NoJSErrors()
}
