package main

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"kassa.dev/shared/demo"
	"kassa.dev/web/webtest"
)

// TestTillPINSignInInChromium drives the till's switch user at a
// standalone demo edge in headless Chromium, clicks and typed keys only.
// The store's manager added two cashiers of the store with PINs (over the
// API, as the console does). Cass signs in with her password, sets the
// device up and opens the drawer; Switch user shows the till's roster;
// Cole signs in with his password (he joins the roster); Switch user, a
// tap on Cass and her PIN on the keypad: the header says Cass, and her
// sale is hers at the edge (the order's created_by) and in her My sales. Cole's wrong PINs say
// so, and the fifth locks him out at this till for the edge's Retry-After,
// counted down with the keypad off; Cass still signs in, her PIN typed on a
// keyboard. On a phone the roster and keypad fit and the header names who
// is signed in. Signing out takes Cass off the roster. Screenshots
// till-pin-*.png.
func TestTillPINSignInInChromium(t *testing.T) {
	edge, p := startBrowserEdge(t)
	api := newShop(t, p)
	manager := p.Login(t, "manager@demo.test", demo.Password)
	var one struct {
		Data map[string]any `json:"data"`
	}
	setup := func(method, path string, body any) map[string]any {
		t.Helper()
		one.Data = nil
		if st := p.Call(t, method, "/api/v1"+path, manager, body, &one); st/100 != 2 {
			t.Fatalf("%s %s: %d %v", method, path, st, one.Data)
		}
		return one.Data
	}
	cashier := func(email, name, pin string) string {
		id := setup("POST", "/users", map[string]any{"email": email, "name": name, "role": "cashier", "password": demo.Password,
			"location_ids": []string{api.location}})["id"].(string)
		setup("PUT", "/users/"+id+"/pin", map[string]any{"pin": pin})
		return id
	}
	cass := cashier("cass@demo.test", "Cass Till", "1357")
	cole := cashier("cole@demo.test", "Cole Till", "2468")
	front := setup("POST", "/registers", map[string]any{"location_id": api.location, "name": "Front till"})["id"].(string)

	b := webtest.Start(t, edge.chromium, 1024, 768)
	c := webtest.NewCashier(t, b)
	c.Do("a till", chromedp.EmulateViewport(1024, 768))
	c.SignIn(p.URL, "cass@demo.test", demo.Password)
	c.SetUp(front)
	c.OpenDrawer(map[int64]int{5000: 2}, "")
	c.SignedIn("Cass Till")

	// Switch user: the roster is who signed in here; Cole signs in with
	// his password and joins it.
	c.SwitchUser()
	if got := c.Text("#roster"); !strings.Contains(got, "Cass Till") || strings.Contains(got, "Cole Till") {
		t.Fatalf("the roster says %q: want Cass only", got)
	}
	c.Do("e-mail and password", chromedp.Click("#pin-password"), chromedp.WaitVisible("#login"),
		chromedp.SendKeys("#email", "cole@demo.test"), chromedp.SendKeys("#password", demo.Password), chromedp.Click("#login-btn"))
	c.SignedIn("Cole Till")

	// Cass switches in with her PIN on the keypad and sells: the sale is hers.
	c.SwitchUser()
	c.Do("the roster", chromedp.WaitVisible(`#roster button[data-user="`+cole+`"]`))
	c.Shot("till-pin-roster")
	c.PIN(cass, "1357", false)
	c.SignedIn("Cass Till")
	c.Shot("till-pin-signed-in")
	c.Do("a croissant", chromedp.Click(webtest.Tile("BAK-CRO")))
	c.Priced(1)
	number := c.PayQuickCash("", "")
	c.NewSale()
	var l list
	p.Call(t, "GET", "/api/v1/orders?number="+number, manager, nil, &l)
	if len(l.Data) != 1 || l.Data[0]["created_by"] != cass || l.Data[0]["status"] != "completed" {
		t.Fatalf("order %s: %v, want completed and created by Cass (%s)", number, l.Data, cass)
	}
	// Her own sales on the till say so too (Cole has sold nothing).
	c.Do("my sales", chromedp.Click("#mysales-btn"), chromedp.WaitVisible(`#mysales[data-state="shown"]`))
	if got := c.Text(`#mysales-sums dd[data-col="orders"]`); got != "1" {
		t.Fatalf("Cass's sales today: %q, want 1", got)
	}
	c.Do("close", chromedp.Click("#mysales .close"), chromedp.WaitNotVisible("#overlay"))

	// Cole's wrong PINs: said each time; the fifth locks him out here.
	c.SwitchUser()
	for i := 1; i <= 4; i++ {
		c.PIN(cole, "1111", false)
		c.Poll("wrong PIN said", `document.getElementById('pin-error').textContent === 'Wrong PIN for Cole Till. Try again.'`)
	}
	c.PIN(cole, "1111", true)
	c.Poll("locked out, counting down", `/Cole Till can try again in \d+ s\./.test(document.getElementById('pin-error').textContent) &&
		document.getElementById('pin-ok').disabled && document.querySelector('#keys button[data-key="1"]').disabled`)
	c.Shot("till-pin-locked")
	if got := c.Text("#pin-error"); !strings.Contains(got, "Too many wrong PINs for this user") {
		t.Fatalf("the lockout says %q: want the edge's reason", got)
	}
	// The edge holds the lockout too: the right PIN from here is refused.
	var refused struct {
		Title string `json:"title"`
	}
	if st := p.Call(t, "POST", "/api/v1/auth/pin", "", map[string]any{"user_id": cole, "pin": "2468"}, &refused); st != 429 {
		t.Fatalf("Cole's right PIN during the lockout: %d, want 429", st)
	}

	// On a phone: the roster and keypad; Cass types her PIN.
	c.Do("a phone", chromedp.EmulateViewport(390, 844))
	c.Do("tap Cass", chromedp.Click(`#roster button[data-user="`+cass+`"]`), chromedp.WaitEnabled("#pin-input"))
	c.Shot("till-pin-phone")
	c.Do("type the PIN", chromedp.SendKeys("#pin-input", "1357\r"))
	c.SignedIn("Cass Till")
	c.Poll("who on the phone", `document.getElementById('who').getBoundingClientRect().width > 0`)
	c.Shot("till-pin-phone-signed-in")
	c.Do("a till again", chromedp.EmulateViewport(1024, 768))

	// Signing out takes Cass off this till's roster.
	c.Do("sign out", chromedp.Click("#logout"), chromedp.WaitVisible("#pinpad"))
	if got := c.Text("#roster"); strings.Contains(got, "Cass Till") || !strings.Contains(got, "Cole Till") {
		t.Fatalf("after Cass signs out the roster says %q", got)
	}
	c.NoJSErrors()
}
