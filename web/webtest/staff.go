package webtest

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// SwitchUser taps the till's Switch user: the session ends and the till
// shows the staff who signed in at it before.
func (c *Cashier) SwitchUser() {
	c.T.Helper()
	c.Do("switch user", chromedp.Click("#switch-btn"), chromedp.WaitVisible("#pinpad"))
}

// PIN taps a person of the till's roster (their user id) and their PIN:
// on the keypad, or typed on a keyboard and Enter when typed is set.
func (c *Cashier) PIN(user, pin string, typed bool) {
	c.T.Helper()
	who := fmt.Sprintf(`#roster button[data-user="%s"]`, user)
	c.Do("tap "+user, chromedp.WaitVisible(who), chromedp.Click(who), chromedp.WaitEnabled("#pin-input"))
	if typed {
		c.Do("type the PIN", chromedp.SendKeys("#pin-input", pin+"\r"))
		return
	}
	for _, d := range pin {
		c.Do("tap "+string(d), chromedp.Click(fmt.Sprintf(`#keys button[data-key="%c"]`, d)))
	}
	c.Do("sign in", chromedp.Click("#pin-ok"))
}

// SignedIn waits until the till's header names who and the sale screen
// is back with its products.
func (c *Cashier) SignedIn(who string) {
	c.T.Helper()
	c.Poll(who+" signed in", `document.getElementById('who').textContent === `+strconv.Quote(who)+
		` && !document.getElementById('sale').hidden && document.querySelector('#grid .tile') !== null`)
}

// Retype replaces what the field sel holds by text, as a person does:
// to its end, backspace over it, type.
func (c *Cashier) Retype(sel, text string) {
	c.T.Helper()
	v, err := chromedp.Run(c.B.Ctx, chromedp.Value(sel))
	if err != nil {
		c.T.Fatalf("the value of %s: %v", sel, err)
	}
	c.Do("retype "+sel, chromedp.SendKeys(sel, kb.End+strings.Repeat(kb.Backspace, len([]rune(v)))+text))
}
