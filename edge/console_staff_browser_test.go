package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"kassa.dev/shared/demo"
	"kassa.dev/web/webtest"
)

// TestConsoleStaffInChromium drives the console's staff section at a
// standalone demo edge in headless Chromium at 1024×768, as the store's
// manager, clicks and typed keys only; the API is read only to check what
// it then holds. The list shows every account with its role, locations,
// status and PIN, and the demo cashier (of every location) as managed by
// an owner. The manager adds a cashier: a short password first, refused
// with the API's problem naming the field and nothing stored; then the
// cashier of the store with a PIN. The manager renames them, unticks every
// location (refused: the API's rule, said in the dialog, nothing changed),
// resets the password (the new one signs in), sets a new PIN (it signs in
// at /auth/pin), deactivates them (they cannot sign in) and reactivates
// them. An owner sees every account manageable and may add a manager. On
// a phone each person is a card. Screenshots console-staff-*.png.
func TestConsoleStaffInChromium(t *testing.T) {
	edge, p := startBrowserEdge(t)
	api := newShop(t, p)
	manager := p.Login(t, "manager@demo.test", demo.Password)
	user := func(email string) map[string]any {
		t.Helper()
		var l list
		p.Call(t, "GET", "/api/v1/users?limit=200", manager, nil, &l)
		for _, u := range l.Data {
			if u["email"] == email {
				return u
			}
		}
		return nil
	}
	signsIn := func(email, password string) bool {
		return p.Call(t, "POST", "/api/v1/auth/login", "", map[string]any{"email": email, "password": password}, nil) == 200
	}

	b := webtest.Start(t, edge.chromium, 1024, 768)
	c := webtest.NewCashier(t, b)
	row := func(email string) string { return fmt.Sprintf(`#staff-rows tr[data-email="%s"]`, email) }
	act := func(email, what string) string { return row(email) + fmt.Sprintf(` button[data-act="%s"]`, what) }
	errorSays := func(what string) {
		t.Helper()
		c.Poll("the dialog says "+what, `document.getElementById('staff-error').textContent.includes(`+jsString(what)+`)`)
	}
	done := func(what string) {
		t.Helper()
		c.Poll(what, `!document.getElementById('staff-dlg').open && document.getElementById('staff-msg').textContent.includes(`+jsString(what)+`)`)
	}
	c.Do("a back-office screen", chromedp.EmulateViewport(1024, 768))
	c.Do("log in", chromedp.Navigate(p.URL+"/console"), chromedp.WaitVisible("#login"), chromedp.SendKeys("#email", "manager@demo.test"),
		chromedp.SendKeys("#password", demo.Password), chromedp.Click("#login-btn"), chromedp.WaitVisible(row("cashier@demo.test")))
	if got := c.Text(row("cashier@demo.test")); !strings.Contains(got, "Cashier") || !strings.Contains(got, "Every location") ||
		!strings.Contains(got, "Active") || !strings.Contains(got, "Managed by an owner") {
		t.Fatalf("the demo cashier's row says %q", got)
	}
	if got := c.Text(row("owner@demo.test")); !strings.Contains(got, "Owner") {
		t.Fatalf("the owner's row says %q", got)
	}

	// Add a cashier: a short password is the API's 422, nothing stored.
	c.Do("add", chromedp.Click("#staff-add"), chromedp.WaitVisible("#staff-email"))
	c.Do("a new cashier", chromedp.SendKeys("#staff-name", "Tess Temp"), chromedp.SendKeys("#staff-email", "tess@demo.test"),
		chromedp.SendKeys("#staff-password", "short"), chromedp.SendKeys("#staff-pin", "4321"), chromedp.Click("#staff-ok"))
	errorSays("password: must have 8-256 characters")
	c.Shot("console-staff-refused")
	if user("tess@demo.test") != nil {
		t.Fatal("a refused account was stored")
	}
	c.Retype("#staff-password", "temp-till-1")
	c.Do("add her", chromedp.Click("#staff-ok"))
	done("Added Tess Temp (Cashier, ")
	c.Do("her row", chromedp.WaitVisible(row("tess@demo.test")))
	tess := user("tess@demo.test")
	if tess == nil || tess["role"] != "cashier" || tess["has_pin"] != true || tess["is_active"] != true ||
		fmt.Sprint(tess["location_ids"]) != "["+api.location+"]" {
		t.Fatalf("the API holds %v: want an active cashier of the store with a PIN", tess)
	}
	id := tess["id"].(string)
	if got := c.Text(row("tess@demo.test")); !strings.Contains(got, "Cashier") || !strings.Contains(got, "Set") || strings.Contains(got, "Every location") {
		t.Fatalf("her row says %q", got)
	}
	c.Do("scroll to the staff", chromedp.ScrollIntoView("#staff"))
	c.Shot("console-staff")

	// Rename; no location at all is refused by the rule, as the API says.
	c.Do("edit", chromedp.Click(act("tess@demo.test", "edit")), chromedp.WaitVisible("#staff-name"))
	c.Retype("#staff-name", "Tess Tempest")
	c.Do("no location", chromedp.Click(`#staff-locs input[value="`+api.location+`"]`), chromedp.Click("#staff-ok"))
	errorSays("a manager manages only cashiers of the locations the manager works at")
	c.Shot("console-staff-rule")
	if u := user("tess@demo.test"); u["name"] != "Tess Temp" || fmt.Sprint(u["location_ids"]) != "["+api.location+"]" {
		t.Fatalf("a refused edit changed %v", u)
	}
	c.Do("her location again", chromedp.Click(`#staff-locs input[value="`+api.location+`"]`), chromedp.Click("#staff-ok"))
	done("Saved Tess Tempest.")
	c.Do("renamed", chromedp.WaitVisible(`//tr[@data-email="tess@demo.test"]//strong[.="Tess Tempest"]`))
	if u := user("tess@demo.test"); u["name"] != "Tess Tempest" {
		t.Fatalf("the API holds the name %v", u["name"])
	}

	// Reset the password: the new one signs in, the old one not.
	c.Do("password", chromedp.Click(act("tess@demo.test", "password")), chromedp.WaitVisible("#staff-password"),
		chromedp.SendKeys("#staff-password", "new-till-pass"), chromedp.Click("#staff-ok"))
	done("The password of Tess Tempest is reset.")
	if !signsIn("tess@demo.test", "new-till-pass") || signsIn("tess@demo.test", "temp-till-1") {
		t.Fatal("after the reset the new password does not sign in, or the old one does")
	}

	// A PIN of 3 digits is the API's 422; a new PIN signs in at the till.
	c.Do("PIN", chromedp.Click(act("tess@demo.test", "pin")), chromedp.WaitVisible("#staff-pin"),
		chromedp.SendKeys("#staff-pin", "123"), chromedp.Click("#staff-ok"))
	errorSays("pin: must be 4-8 digits")
	c.Retype("#staff-pin", "8642")
	c.Do("set it", chromedp.Click("#staff-ok"))
	done("The PIN of Tess Tempest is set.")
	if st := p.Call(t, "POST", "/api/v1/auth/pin", "", map[string]any{"user_id": id, "pin": "8642"}, nil); st != 200 {
		t.Fatalf("the new PIN signs in: %d", st)
	}

	// Deactivate (asked first), then reactivate.
	c.Do("deactivate", chromedp.Click(act("tess@demo.test", "deactivate")), chromedp.WaitVisible("#staff-ok"))
	c.Shot("console-staff-deactivate")
	c.Do("confirm", chromedp.Click("#staff-ok"))
	done("Tess Tempest is deactivated")
	c.Do("shown deactivated", chromedp.WaitVisible(row("tess@demo.test")+`.inactive `+`button[data-act="reactivate"]`))
	if u := user("tess@demo.test"); u["is_active"] != false || signsIn("tess@demo.test", "new-till-pass") {
		t.Fatalf("after deactivating the API holds %v or she still signs in", u)
	}
	c.Do("reactivate", chromedp.Click(act("tess@demo.test", "reactivate")))
	c.Poll("active again", `document.getElementById('staff-msg').textContent.includes('Tess Tempest is active again')`)
	c.Do("shown active", chromedp.WaitVisible(act("tess@demo.test", "deactivate")))
	if u := user("tess@demo.test"); u["is_active"] != true || !signsIn("tess@demo.test", "new-till-pass") {
		t.Fatalf("after reactivating the API holds %v or she cannot sign in", u)
	}

	// A phone: each person a card with the buttons under it.
	c.Do("a phone", chromedp.EmulateViewport(390, 844))
	c.Do("scroll to the staff", chromedp.ScrollIntoView(row("tess@demo.test")))
	c.Shot("console-staff-phone")
	c.Do("add on a phone", chromedp.Click("#staff-add"), chromedp.WaitVisible("#staff-email"))
	c.Shot("console-staff-phone-add")
	c.Do("cancel", chromedp.Click("#staff-cancel"), chromedp.WaitNotVisible("#staff-email"))

	// An owner manages every account and may add a manager.
	c.Do("a back-office screen", chromedp.EmulateViewport(1024, 768))
	c.Do("log out", chromedp.Click("#logout"), chromedp.WaitVisible("#login"))
	c.Retype("#email", "owner@demo.test")
	c.Do("log in as the owner", chromedp.SendKeys("#password", demo.Password), chromedp.Click("#login-btn"),
		chromedp.WaitVisible(act("cashier@demo.test", "edit")))
	c.Do("add a manager", chromedp.Click("#staff-add"), chromedp.WaitVisible("#staff-email"),
		chromedp.SendKeys("#staff-name", "Max Manager"), chromedp.SendKeys("#staff-email", "max@demo.test"),
		chromedp.SendKeys("#staff-role", "Manager"), chromedp.SendKeys("#staff-password", "manager-pass"), chromedp.Click("#staff-ok"))
	done("Added Max Manager (Manager, ")
	if u := user("max@demo.test"); u == nil || u["role"] != "manager" {
		t.Fatalf("the owner's new manager: %v", u)
	}
	c.NoJSErrors()
}

// jsString quotes s for a JavaScript expression.
func jsString(s string) string { return fmt.Sprintf("%q", s) }
