package webtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Cashier drives the edge's /till page as a cashier would: clicks and
// typed keys (a barcode scanner types too), never the API. The edge's
// browser test and the hub link test run the same steps, so a sale at an
// offline edge is the sale a connected one makes.
type Cashier struct {
	T *testing.T
	B *Browser
	// Shots is where Shot saves screenshots ("" saves nowhere).
	Shots string
}

// NewCashier is a cashier at b, saving screenshots to $KASSA_SCREENSHOTS
// (docs/screenshots when refreshed), or nowhere.
func NewCashier(t *testing.T, b *Browser) *Cashier {
	c := &Cashier{T: t, B: b, Shots: os.Getenv("KASSA_SCREENSHOTS")}
	if c.Shots != "" {
		if err := os.MkdirAll(c.Shots, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// Shot saves the page as <Shots>/<name>.png.
func (c *Cashier) Shot(name string) {
	c.T.Helper()
	if c.Shots == "" {
		return
	}
	png, err := chromedp.Run(c.B.Ctx, chromedp.CaptureScreenshot())
	if err != nil {
		c.T.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(c.Shots, name+".png"), png, 0o644); err != nil {
		c.T.Fatal(err)
	}
}

// Do runs actions within 20 s, or fails showing what the page says.
func (c *Cashier) Do(what string, actions ...chromedp.Action[chromedp.Void]) {
	c.T.Helper()
	c.within(20*time.Second, what, actions...)
}

func (c *Cashier) within(d time.Duration, what string, actions ...chromedp.Action[chromedp.Void]) {
	c.T.Helper()
	ctx, cancel := context.WithTimeout(c.B.Ctx, d)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		shown, _ := chromedp.Run(c.B.Ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('.msg,.error,.dialog,#link')].filter(e => e.offsetParent !== null && e.textContent.trim()).map(e => e.id + ': ' + e.textContent.trim().slice(0, 300)).join('\n')`))
		c.T.Fatalf("%s (within %s): %v\nshown:\n%s", what, d, err, shown)
	}
}

// Poll waits up to 30 s for js to be true. An expression that throws
// (an element it reads is not on the page yet, or the page is re-drawing
// it) counts as false and is tried again: chromedp's polling stops for
// good at the first exception after its first try, and the wait then ran
// out with the page showing what was asked (the till test's "a second
// print", when the reprint's job was caught still printing).
func (c *Cashier) Poll(what, js string) {
	c.T.Helper()
	c.within(30*time.Second, what, chromedp.Poll[chromedp.Void](SafeJS(js), chromedp.WithPollingTimeout(30*time.Second)))
}

// Click clicks sel within 20 s. A node the page drew again between
// chromedp finding it and clicking it ("Could not find node with given
// id": a list re-rendered after a save) is looked up again and clicked, as
// a person's tap lands on the button shown now.
func (c *Cashier) Click(what, sel string) {
	c.T.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(c.B.Ctx, time.Until(deadline))
		_, err := chromedp.Run(ctx, chromedp.Click(sel))
		cancel()
		if err == nil {
			return
		}
		if !strings.Contains(err.Error(), "Could not find node with given id") || time.Now().After(deadline) {
			c.within(2*time.Second, what, chromedp.Click(sel)) // a last try: fails with what the page shows
			return
		}
	}
}

// SafeJS is the boolean expression js, false where it throws.
func SafeJS(js string) string {
	return "(() => { try { return !!(" + js + "); } catch (e) { return false; } })()"
}

// Text is the text of the first element sel matches.
func (c *Cashier) Text(sel string) string {
	c.T.Helper()
	c.Do("see "+sel, chromedp.WaitVisible(sel))
	v, err := chromedp.Run(c.B.Ctx, chromedp.Text(sel))
	if err != nil {
		c.T.Fatalf("text of %s: %v\n%.2000s", sel, err, c.B.Page())
	}
	return strings.TrimSpace(v)
}

// Tile is the product tile of sku.
func Tile(sku string) string { return fmt.Sprintf(`#grid .tile[data-sku="%s"]`, sku) }

// SignIn opens base/till and signs in; the till asks which register it is
// when it does not know yet.
func (c *Cashier) SignIn(base, email, password string) {
	c.T.Helper()
	c.Do("open the till", chromedp.Navigate(base+"/till"), chromedp.WaitVisible("#login"))
	c.Do("sign in", chromedp.SendKeys("#email", email), chromedp.SendKeys("#password", password), chromedp.Click("#login-btn"))
}

// SetUp answers the till's set-up with the register of that id.
func (c *Cashier) SetUp(register string) {
	c.T.Helper()
	sel := fmt.Sprintf(`#setup-list button[data-register="%s"]`, register)
	c.Do("the till's set-up", chromedp.WaitVisible(sel))
	c.Shot("till-0-set-up")
	c.Do("this till", chromedp.Click(sel))
}

// Count types a cash count into the open or close dialog (box: dopen or
// dclose): count notes or coins of each value (minor units), typed into
// the value's field, or tapped with + when taps is set.
func (c *Cashier) Count(box string, counts map[int64]int, taps bool) {
	c.T.Helper()
	for v, n := range counts {
		row := fmt.Sprintf(`#%s-count .denom[data-value="%d"]`, box, v)
		if taps {
			for range n {
				c.Do("one more", chromedp.Click(row+` button[aria-label^="One more"]`))
			}
			continue
		}
		c.Do("count", chromedp.Click(row+" input"), chromedp.SendKeys(row+" input", fmt.Sprint(n)))
	}
}

// OpenDrawer counts the float (see Count) and opens the drawer; the
// dialog is on screen when the till has no open drawer.
func (c *Cashier) OpenDrawer(counts map[int64]int, shot string) {
	c.T.Helper()
	c.Do("the drawer to open", chromedp.WaitVisible("#dopen-ok"))
	c.Count("dopen", counts, false)
	if shot != "" {
		c.Shot(shot)
	}
	c.Do("open it", chromedp.Click("#dopen-ok"), chromedp.WaitNotVisible("#overlay"))
}

// Priced waits until the cart has n lines, each priced by the edge.
func (c *Cashier) Priced(n int) {
	c.T.Helper()
	c.Poll(fmt.Sprintf("%d lines priced by the edge", n), fmt.Sprintf(`document.querySelectorAll('#lines li').length === %[1]d &&
		(%[1]d === 0 || !document.getElementById('pay-btn').disabled) && !document.querySelector('#lines').textContent.includes('…')`, n))
}

// Receipt waits for the receipt and answers its order number (the
// barcode's text).
func (c *Cashier) Receipt() string {
	c.T.Helper()
	c.Do("the receipt", chromedp.WaitVisible("#receipt .barcode"))
	return c.Text("#receipt .code")
}

// PayQuickCash pays the whole sale with a quick-cash button ("20.00", or
// "" for the first: exact) and answers the receipt's order number.
func (c *Cashier) PayQuickCash(amount, shot string) string {
	c.T.Helper()
	sel := `#quick button`
	if amount != "" {
		sel = fmt.Sprintf(`#quick button[data-cash="%s"]`, amount)
	}
	c.Do("pay", chromedp.Click("#pay-btn"), chromedp.WaitVisible(sel))
	if shot != "" {
		c.Shot(shot)
	}
	c.Do("cash", chromedp.Click(sel))
	return c.Receipt()
}

// NewSale leaves the receipt for the next sale.
func (c *Cashier) NewSale() {
	c.T.Helper()
	c.Do("next sale", chromedp.Click("#new-sale"), chromedp.WaitNotVisible("#overlay"))
}

// LatteAndLoaf rings up a latte with oat milk from the grid and a loaf
// scanned by its barcode (9300000000011).
func (c *Cashier) LatteAndLoaf() {
	c.T.Helper()
	c.Do("a latte", chromedp.Click(Tile("COF-LAT")), chromedp.WaitVisible(`#mods-groups button[data-option="Oat"]`),
		chromedp.Click(`#mods-groups button[data-option="Oat"]`), chromedp.Click("#mods-ok"))
	c.Do("scan a loaf", chromedp.SendKeys("#search", "9300000000011\r"))
	c.Priced(2)
}

// VoucherCustomerGiftCard rings up avocado toast and a croissant with a
// voucher and a customer found by name, then pays what the gift card
// holds on it and the rest by card; it answers the order number.
func (c *Cashier) VoucherCustomerGiftCard(voucher, customer, gift, shot string) string {
	c.T.Helper()
	c.Do("avocado toast and a croissant", chromedp.Click(Tile("FOOD-AVO")), chromedp.Click(Tile("BAK-CRO")))
	c.Priced(2)
	c.Do("the voucher", chromedp.Click("#voucher-btn"), chromedp.WaitVisible("#vouch-code"),
		chromedp.SendKeys("#vouch-code", voucher), chromedp.Click("#vouch-ok"))
	c.Poll("the offer priced", `document.getElementById('totals').querySelector('.offer') !== null`)
	c.FindCustomer(customer)
	c.Poll("their points", `document.getElementById('customer').textContent.includes('points')`)
	if shot != "" {
		c.Shot(shot + "-sale")
	}
	c.Do("pay", chromedp.Click("#pay-btn"), chromedp.WaitVisible("#pay-amount"),
		chromedp.Click(`[data-tender="gift_card"]`), chromedp.SendKeys("#gift-code", gift), chromedp.Click("#gift-check"))
	c.Poll("the card's balance", `document.getElementById('gift-balance').textContent.startsWith('Balance')`)
	if shot != "" {
		c.Shot(shot + "-pay")
	}
	c.Do("take the gift card", chromedp.Click("#take-gift"))
	c.Poll("part paid", `document.querySelectorAll('#pay-done li').length === 1`)
	c.Do("the rest by card", chromedp.Click(`[data-tender="card"]`), chromedp.Click("#take-card"))
	return c.Receipt()
}

// FindCustomer looks a customer up by name on the sale and taps them.
// Each keystroke's search draws the list again: it waits for the name,
// then taps the first result as it is drawn now (Click).
func (c *Cashier) FindCustomer(name string) {
	c.T.Helper()
	c.Do("look "+name+" up", chromedp.Click("#customer-btn"), chromedp.WaitVisible("#cust-q"), chromedp.SendKeys("#cust-q", name))
	c.Poll(name+" found", `[...document.querySelectorAll('#cust-list button')].some(b => b.textContent.includes(`+strconv.Quote(name)+`))`)
	c.Click(name, "#cust-list button")
}

// ReloadMidSale puts a flat white in the cart, reloads, pays (the page
// makes the order), reloads on the pay screen and pays exact cash; it
// answers the order number, the same before and after the reloads.
func (c *Cashier) ReloadMidSale() string {
	c.T.Helper()
	c.Do("a flat white", chromedp.Click(Tile("COF-FW")), chromedp.WaitVisible("#mods-ok"), chromedp.Click("#mods-ok"))
	c.Priced(1)
	c.Do("reload with the cart", chromedp.Reload())
	c.Priced(1) // the cart is still there, priced again
	c.Do("pay", chromedp.Click("#pay-btn"), chromedp.WaitVisible("#pay-number"))
	c.Poll("the order number", `document.getElementById('pay-number').textContent !== ''`)
	number := c.Text("#pay-number")
	c.Do("reload", chromedp.Reload(), chromedp.WaitVisible("#quick button"))
	if again := c.Text("#pay-number"); again != number {
		c.T.Fatalf("after the reload paying %q, before %q", again, number)
	}
	c.Do("exact cash", chromedp.Click("#quick button"))
	if got := c.Receipt(); got != number {
		c.T.Fatalf("receipt of %s, paying %s", got, number)
	}
	return number
}

// ScanRefund scans a receipt's order number at the sale screen and
// refunds the whole order; the page says how the money went back.
func (c *Cashier) ScanRefund(number, line, shot string) {
	c.T.Helper()
	c.Do("scan the receipt", chromedp.Click("#search"), chromedp.SendKeys("#search", number+"\r"))
	c.Do("the order found", chromedp.WaitVisible(fmt.Sprintf(`#refund-order li[data-line="%s"]`, line)))
	if shot != "" {
		c.Shot(shot)
	}
	c.Do("refund it all", chromedp.Click("#refund-ok"))
}

// Refunded waits until the refund dialog says the refund went through.
func (c *Cashier) Refunded() {
	c.T.Helper()
	c.Poll("refunded", `document.getElementById('refund-msg').textContent.startsWith('Refunded')`)
}

// Approve signs a manager in on the approval dialog.
func (c *Cashier) Approve(email, password string) {
	c.T.Helper()
	c.Do("a manager approves", chromedp.WaitVisible("#approve-email"), chromedp.SendKeys("#approve-email", email),
		chromedp.SendKeys("#approve-password", password), chromedp.Click("#approve-ok"))
}

// NoJSErrors fails the test on an uncaught exception of the page.
func (c *Cashier) NoJSErrors() {
	c.T.Helper()
	if errs := c.B.JSErrors(); len(errs) > 0 {
		c.T.Fatalf("JavaScript errors: %v", errs)
	}
}
