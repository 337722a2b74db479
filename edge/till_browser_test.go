package main

import (
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"kassa.dev/shared/demo"
	"kassa.dev/sync/wait"
	"kassa.dev/web/webtest"
)

// TestTillPageInChromium drives /till in headless Chromium at 1024×768 as a
// cashier would, clicks and typed keys only, at a standalone demo edge (no
// hub: the page says it is offline and sells all the same). A manager set
// up over the API beforehand what a manager sets up: the front till (a
// register) with its network printer, the e-mail relay, a gift card, a
// voucher campaign, a loyalty program and a member, a barcode. The
// cashier sets the device up as the front till, counts the float by
// denomination and opens the drawer, then rings up: a cash sale with
// change (a tile with an option, a scanned barcode, a quick-cash button)
// whose receipt is the edge's, numbered at the till, printed at its
// printer, printed again and e-mailed; a sale with a voucher and a loyalty
// customer paid part by gift card and part by card; a discount above the
// cashier's limit that a manager's sign-in approves; a parked order
// resumed, a line voided, paid; reloads with a cart and in the middle of
// paying that neither lose nor double the order; a refund found by
// scanning the first receipt, with its own receipt; a refund above the
// cashier's refund limit that a manager approves. Then the drawer: a
// paid-out (a manager's), a no-sale, the X report (a manager's), the blind
// close and the Z report, whose figures are the drawer's. Last, a phone.
// Screenshots of each screen go to $KASSA_SCREENSHOTS.
func TestTillPageInChromium(t *testing.T) {
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
	// What a manager sets up: the front till and its printer, the e-mail
	// relay (down: e-mails wait), a barcode, a $10 gift card, a voucher, a
	// loyalty program and a member.
	owner := p.Login(t, "owner@demo.test", demo.Password)
	if st := p.Call(t, "PUT", "/api/v1/payments/methods", owner, map[string]any{"methods": []any{map[string]any{"method": "gift_card", "enabled": true}}}, nil); st != 200 {
		t.Fatalf("enable gift cards: %d", st)
	}
	front := setup("POST", "/registers", map[string]any{"location_id": api.location, "name": "Front till"})["id"].(string)
	setup("POST", "/registers", map[string]any{"location_id": api.location, "name": "Bar till"})
	printer := startPrinter(t)
	setup("PUT", "/registers/"+front+"/printer", map[string]any{"host": "127.0.0.1", "port": printer.port, "paper_width": 58})
	setup("PATCH", "/receipt-settings", map[string]any{"smtp_host": "127.0.0.1", "smtp_port": closedPort(t), "smtp_from": "till@demo.test",
		"footer": "Thank you — see you soon"})
	gift := setup("POST", "/gift-cards", map[string]any{"initial_amount": 1000})["code"].(string)
	var bakery string
	var l list
	p.Call(t, "GET", "/api/v1/catalog/categories", manager, nil, &l)
	for _, c := range l.Data {
		if c["name"] == "Bakery" {
			bakery = c["id"].(string)
		}
	}
	setup("POST", "/catalog/products", map[string]any{"name": "Sourdough Loaf", "sku": "BAK-SD", "base_price": 800,
		"category_id": bakery, "barcodes": []string{"9300000000011"}})
	camp := setup("POST", "/campaigns", map[string]any{"name": "Treat: 10 % off bakery", "type": "discount", "voucher_code": "TREAT",
		"location_ids": []string{api.location}, "rules": []any{map[string]any{"type": "category_discount", "discount_type": "percent",
			"value": 1000, "category_ids": []string{bakery}}}})
	setup("POST", "/campaigns/"+camp["id"].(string)+"/launch", nil)
	setup("POST", "/loyalty/programs", map[string]any{"name": "Beans", "points_per_unit": 1, "redemption_value": 1})
	lena := setup("POST", "/customers", map[string]any{"first_name": "Lena", "last_name": "Loyal", "phone": "0400 000 111"})["id"].(string)
	setup("POST", "/loyalty/accounts", map[string]any{"customer_id": lena})
	var me struct {
		Data map[string]any `json:"data"`
	}
	p.Call(t, "GET", "/api/v1/auth/me", manager, nil, &me)
	managerID := me.Data["id"]
	p.Call(t, "GET", "/api/v1/auth/me", p.Login(t, "cashier@demo.test", demo.Password), nil, &me)
	cashierID := me.Data["id"]

	b := webtest.Start(t, edge.chromium, 1024, 768)
	c := webtest.NewCashier(t, b)
	order := func(number string) map[string]any {
		t.Helper()
		var l list
		p.Call(t, "GET", "/api/v1/orders?number="+number, manager, nil, &l)
		if len(l.Data) != 1 {
			t.Fatalf("orders numbered %s: %d", number, len(l.Data))
		}
		return l.Data[0]
	}
	orders := func() int {
		var l list
		p.Call(t, "GET", "/api/v1/orders?limit=200&location_id="+api.location, manager, nil, &l)
		return len(l.Data)
	}
	receiptOf := func(id, refund string) map[string]any {
		t.Helper()
		q := ""
		if refund != "" {
			q = "?refund_id=" + refund
		}
		return setup("GET", "/orders/"+id+"/receipt"+q, nil)
	}

	// Sign in; set the device up as the front till; count the float:
	// two $50 notes tapped, five $10 and ten $2 coins typed: $170.
	c.Do("phone-free", chromedp.EmulateViewport(1024, 768))
	c.Do("open the till", chromedp.Navigate(p.URL+"/till"), chromedp.WaitVisible("#login"))
	c.Shot("till-0-login")
	c.SignIn(p.URL, "cashier@demo.test", demo.Password)
	c.SetUp(front)
	c.Do("the drawer to open", chromedp.WaitVisible("#dopen-ok"))
	c.Count("dopen", map[int64]int{5000: 2}, true)
	c.Count("dopen", map[int64]int{1000: 5, 200: 10}, false)
	if got := c.Text("#dopen-total"); !strings.Contains(got, "170.00") {
		t.Fatalf("the float counted shows %q, want 170.00", got)
	}
	c.OpenDrawer(nil, "till-1-open-drawer")
	var drawers list
	p.Call(t, "GET", "/api/v1/drawers?status=open&register_id="+front, manager, nil, &drawers)
	if len(drawers.Data) != 1 || drawers.Data[0]["float"] != float64(17000) || len(drawers.Data[0]["float_count"].([]any)) != 3 {
		t.Fatalf("open drawers at the front till: %v", drawers.Data)
	}
	drawer := drawers.Data[0]["id"].(string)
	c.Poll("offline shown, the till named", `document.getElementById('link').textContent.startsWith('Offline') &&
		document.getElementById('till-name').textContent === 'Front till'`)

	// 1. Cash with change: a latte with oat milk, a loaf scanned, $20.
	c.LatteAndLoaf()
	if got := c.Text("#lines"); !strings.Contains(got, "Oat") || !strings.Contains(got, "Sourdough Loaf") {
		t.Fatalf("cart shows %q", got)
	}
	c.Shot("till-2-sale")
	first := c.PayQuickCash("20.00", "till-3-pay-cash")
	o := order(first)
	r := receiptOf(o["id"].(string), "")
	change := 2000 - int64(o["total"].(float64))
	if got := c.Text("#change"); o["status"] != "completed" || !strings.Contains(got, fmt.Sprintf("%d.%02d", change/100, change%100)) {
		t.Fatalf("order %s %v total %v: the receipt says %q", first, o["status"], o["total"], got)
	}
	// The receipt is the edge's, numbered at the front till; it printed
	// there (the drawer kicked open: cash), the page says so.
	if got := c.Text("#receipt-number"); got != "Receipt "+r["number"].(string) || r["register_id"] != front ||
		!strings.HasSuffix(r["number"].(string), "-000001") {
		t.Fatalf("the receipt says %q; the edge's is %v at %v", got, r["number"], r["register_id"])
	}
	c.Do("printed", chromedp.WaitVisible(`#receipt-jobs li[data-kind="print"][data-status="done"]`))
	wait.For(t, 5*time.Second, "the printer's bytes", func() bool { return len(printer.prints()) == 1 })
	if ps := printer.prints(); len(ps) != 1 || !strings.Contains(string(ps[0]), r["number"].(string)) || !strings.Contains(string(ps[0]), "\x1bp") {
		t.Fatalf("the printer got %d prints: %q", len(ps), ps)
	}
	// Printed again; e-mailed to an address typed at the till (a bad one
	// first); the relay is down, so the e-mail waits and the page says so.
	c.Do("print again", chromedp.Click("#print-btn"))
	c.Poll("a second print", `document.querySelector('#receipt-jobs li[data-kind="print"][data-status="done"]').textContent.includes('2 copies')`)
	c.Do("a bad address", chromedp.SendKeys("#receipt-email", "lena-at-home"), chromedp.Click("#email-btn"))
	c.Poll("refused", `document.getElementById('receipt-msg').textContent.includes('email')`)
	c.Do("her address", chromedp.SendKeys("#receipt-email", strings.Repeat("\b", 12)+"lena@example.com"),
		chromedp.Click("#email-btn"))
	c.Do("the e-mail queued", chromedp.WaitVisible(`#receipt-jobs li[data-kind="email"]`))
	if got := c.Text(`#receipt-jobs li[data-kind="email"]`); !strings.Contains(got, "lena@example.com") {
		t.Fatalf("the e-mail job says %q", got)
	}
	c.Shot("till-4-receipt")
	wait.For(t, 5*time.Second, "the reprint's bytes", func() bool { return len(printer.prints()) == 2 })
	if ps := printer.prints(); len(ps) != 2 || strings.Contains(string(ps[1]), "\x1bp") {
		t.Fatalf("a reprint: %d prints, the second one kicks the drawer: %v", len(ps), len(ps) == 2)
	}
	c.NewSale()

	// 2. A voucher and a loyalty member; $10 on the gift card, the rest by card.
	second := c.VoucherCustomerGiftCard("treat", "Lena", gift, "till-5-voucher-customer")
	if got := c.Text("#receipt"); !strings.Contains(got, "Points earned") || !strings.Contains(got, "**** 4242") || !strings.Contains(got, "Gift card") ||
		!strings.Contains(got, "left on the card") || !strings.Contains(got, "Treat") {
		t.Fatalf("split receipt: %q", got)
	}
	c.Shot("till-6-receipt-split")
	o = order(second)
	pays := o["payments"].([]any)
	if o["voucher_code"] != "TREAT" || o["customer_id"] != lena || len(pays) != 2 || pays[0].(map[string]any)["amount"] != float64(1000) ||
		o["loyalty_points_earned"].(float64) <= 0 || o["discount_total"].(float64) <= 0 {
		t.Fatalf("split order: %v", o)
	}
	c.NewSale()

	// 3. A discount above the cashier's limit: a manager signs in on the
	// spot; the sale goes through with it.
	c.Do("an espresso", chromedp.Click(webtest.Tile("COF-ESP")))
	c.Priced(1)
	c.Do("10 % off the line", chromedp.Click(`#lines li[data-line="Espresso"] .name`), chromedp.WaitVisible("#mods-disc"),
		chromedp.Click("#mods-disc"), chromedp.WaitVisible("#disc-chips button"), chromedp.Click("#disc-chips button:nth-child(2)"))
	c.Do("refused for a cashier", chromedp.WaitVisible("#approve-btn"))
	c.Shot("till-7-needs-approval")
	c.Do("ask a manager", chromedp.Click("#approve-btn"))
	c.Approve("manager@demo.test", demo.Password)
	c.Poll("the discount priced", `document.getElementById('totals').textContent.includes('Discount') && document.getElementById('approve-btn').hidden`)
	third := c.PayQuickCash("", "")
	if got := c.Text("#approved"); !strings.Contains(got, "manager@demo.test") {
		t.Fatalf("the receipt says %q of the approval", got)
	}
	// The order is the cashier's and records the approving manager
	// (approved_by; the hub checks its discount against the approver's
	// role when the creator's falls short).
	if o := order(third); o["created_by"] != cashierID || o["approved_by"] != managerID || o["discount_total"].(float64) <= 0 || o["status"] != "completed" {
		t.Fatalf("approved order: %v", o)
	}
	c.NewSale()

	// 4. Park an order, resume it, void a line, pay.
	c.Do("bread and a muffin", chromedp.Click(webtest.Tile("BAK-BB")), chromedp.Click(webtest.Tile("BAK-MUF")))
	c.Priced(2)
	c.Do("park", chromedp.Click("#park"))
	c.Poll("the cart is empty", `document.querySelectorAll('#lines li').length === 0 && document.getElementById('cart-msg').textContent === 'Parked.'`)
	c.Do("the parked list", chromedp.Click("#parked-btn"), chromedp.WaitVisible("#parked-list button[data-number]"))
	parked, err := chromedp.Run(b.Ctx, chromedp.Evaluate[string](`document.querySelector('#parked-list button[data-number]').dataset.number`))
	if err != nil {
		t.Fatal(err)
	}
	c.Shot("till-8-parked")
	c.Do("resume it", chromedp.Click("#parked-list button[data-number]"))
	c.Priced(2)
	c.Do("void the bread", chromedp.Click(`#lines li[data-line="Banana Bread"] .void`))
	c.Priced(1)
	fourth := c.PayQuickCash("", "")
	if o := order(fourth); len(o["line_items"].([]any)) != 1 || o["status"] != "completed" {
		t.Fatalf("resumed order: %v", o)
	}
	if o := order(parked); o["status"] != "cancelled" {
		t.Fatalf("the parked order replaced by the voided one is %v", o["status"])
	}
	c.NewSale()

	// 5. Reloads with a cart and in the middle of paying: the same order
	// comes back, paid once.
	before := orders()
	c.ReloadMidSale()
	if n := orders(); n != before+1 {
		t.Fatalf("the reloaded sale made %d orders", n-before)
	}
	c.NewSale()

	// 6. A return: the first receipt's code scanned at the sale screen;
	// the refund's receipt is the till's next number.
	c.ScanRefund(first, "Sourdough Loaf", "till-9-refund")
	c.Refunded()
	o = order(first)
	if o["status"] != "refunded" {
		t.Fatalf("after the refund order %s is %v", first, o["status"])
	}
	c.Do("its receipt", chromedp.Click("#refund-receipt"), chromedp.WaitVisible("#receipt .barcode"))
	refunds := o["refunds"].([]any)
	rr := receiptOf(o["id"].(string), refunds[0].(map[string]any)["id"].(string))
	if got := c.Text("#receipt-number"); got != "Refund "+rr["number"].(string) || !strings.HasSuffix(rr["number"].(string), "-000006") {
		t.Fatalf("the refund's receipt says %q, the edge's is %v", got, rr["number"])
	}
	c.Shot("till-10-refund-receipt")
	c.Do("back to the refund", chromedp.Click("#new-sale"), chromedp.WaitVisible("#refund-ok"))
	c.Do("close", chromedp.Click("#refund .close"), chromedp.WaitNotVisible("#overlay"))

	// 7. A refund above the cashier's refund limit ($50): seven loaves,
	// refunded once a manager signs in on the till.
	for range 7 {
		c.Do("scan a loaf", chromedp.SendKeys("#search", "9300000000011\r"))
		c.Poll("the loaf", `document.querySelector('#lines li') !== null`)
	}
	c.Poll("seven loaves", `document.querySelector('#lines .qty').textContent === '7×'`)
	c.Priced(1)
	big := c.PayQuickCash("", "")
	c.NewSale()
	c.ScanRefund(big, "Sourdough Loaf", "")
	c.Do("needs a manager", chromedp.WaitVisible("#approve-email"))
	if got := c.Text("#approve-why"); !strings.Contains(got, "limit") {
		t.Fatalf("the approval says %q", got)
	}
	c.Shot("till-11-refund-approval")
	c.Approve("manager@demo.test", demo.Password)
	c.Refunded()
	o = order(big)
	// The refund is the cashier's, approved by the manager (approved_by).
	if rf := o["refunds"].([]any); o["status"] != "refunded" || len(rf) != 1 || rf[0].(map[string]any)["actor"] != cashierID ||
		rf[0].(map[string]any)["approved_by"] != managerID {
		t.Fatalf("the refund above the limit: %v", o)
	}
	if got := c.Text("#refund-msg"); !strings.Contains(got, "approved by manager@demo.test") {
		t.Fatalf("the refund says %q", got)
	}
	c.Do("close", chromedp.Click("#refund .close"), chromedp.WaitNotVisible("#overlay"))

	// 8. The drawer: a paid-out (a manager's), a no-sale, the X report (a
	// manager's), the blind close and its Z.
	c.Do("the drawer", chromedp.Click("#drawer-btn"), chromedp.WaitVisible("#paid-out"))
	c.Shot("till-12-drawer")
	c.Do("paid out", chromedp.Click("#paid-out"), chromedp.WaitVisible("#cash-amount"), chromedp.SendKeys("#cash-amount", "5"),
		chromedp.Click("#cash-reasons button"), chromedp.Click("#cash-ok"))
	c.Approve("manager@demo.test", demo.Password)
	c.Poll("paid out", `document.getElementById('cart-msg').textContent.startsWith('Paid out')`)
	c.Do("no sale", chromedp.Click("#drawer-btn"), chromedp.WaitVisible("#no-sale"), chromedp.Click("#no-sale"))
	c.Poll("recorded", `document.getElementById('drawer-msg').textContent.startsWith('No sale')`)
	c.Do("the X report", chromedp.Click("#x-report"))
	c.Approve("manager@demo.test", demo.Password)
	c.Do("shown", chromedp.WaitVisible("#xrep .figures"))
	x := setup("GET", "/drawers/"+drawer+"/x-report", nil)
	if got := c.Text("#xrep"); !strings.Contains(got, "Expected in the drawer") || !strings.Contains(got, money(x["expected"])) {
		t.Fatalf("the X report says %q; expected %v", got, x["expected"])
	}
	c.Shot("till-13-x-report")
	c.Do("close the X", chromedp.Click("#xrep .close"), chromedp.WaitNotVisible("#overlay"))
	c.Do("close the drawer", chromedp.Click("#drawer-btn"), chromedp.WaitVisible("#close-drawer"), chromedp.Click("#close-drawer"),
		chromedp.WaitVisible("#dclose-ok"))
	// The count is blind: nothing on screen says what the drawer should hold.
	c.Count("dclose", map[int64]int{5000: 3, 1000: 5}, false)
	c.Do("a note", chromedp.SendKeys("#dclose-note", "counted twice"))
	if got := c.Text("#dclose"); strings.Contains(got, money(x["expected"])) || strings.Contains(got, "Expected") {
		t.Fatalf("the blind count shows %q", got)
	}
	c.Shot("till-14-blind-close")
	c.Do("close it", chromedp.Click("#dclose-ok"), chromedp.WaitVisible("#zrep-done"))
	c.Shot("till-15-z-report")
	var zs list
	p.Call(t, "GET", "/api/v1/z-reports?register_id="+front, manager, nil, &zs)
	if len(zs.Data) != 1 {
		t.Fatalf("Z reports of the front till: %v", zs.Data)
	}
	z := zs.Data[0]
	if z["number"] != float64(1) || z["counted"] != float64(20000) || z["expected"] != x["expected"] ||
		z["over_short"] != 20000-x["expected"].(float64) || z["no_sales"] != float64(1) || z["paid_out"] != float64(500) || z["note"] != "counted twice" {
		t.Fatalf("Z %v after X %v", z, x)
	}
	if got := c.Text("#zrep"); !strings.Contains(got, "Z report 1") || !strings.Contains(got, money(x["expected"])) || !strings.Contains(got, "200.00") {
		t.Fatalf("the Z report says %q", got)
	}
	c.Do("done", chromedp.Click("#zrep-done"), chromedp.WaitNotVisible("#overlay"))
	c.Poll("the drawer to open again", `document.getElementById('drawer-btn').textContent === 'Open drawer'`)

	// A phone: the float counted by touch, the sale screen stacked.
	c.Do("phone size", chromedp.EmulateViewport(390, 844))
	c.Do("open a drawer", chromedp.Click("#drawer-btn"))
	c.Count("dopen", map[int64]int{2000: 2}, true)
	c.Shot("till-16-phone-open-drawer")
	c.OpenDrawer(nil, "")
	c.Do("a cappuccino", chromedp.Click(webtest.Tile("COF-CAP")), chromedp.WaitVisible("#mods-ok"), chromedp.Click("#mods-ok"))
	c.Priced(1)
	c.Shot("till-17-phone")
	fifth := c.PayQuickCash("", "")
	c.Shot("till-18-phone-receipt")
	if o := order(fifth); o["status"] != "completed" {
		t.Fatalf("the phone's sale: %v", o)
	}
	c.NoJSErrors()
}

// money is minor units as the page shows them, without the symbol.
func money(v any) string {
	n := int64(v.(float64))
	return fmt.Sprintf("%d.%02d", n/100, n%100)
}

// printer is a network thermal printer on 127.0.0.1: it takes each
// connection's bytes (one receipt's ESC/POS) and keeps them.
type printer struct {
	port int
	mu   sync.Mutex
	got  [][]byte
}

func startPrinter(t *testing.T) *printer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	p := &printer{port: ln.Addr().(*net.TCPAddr).Port}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b, _ := io.ReadAll(c)
			c.Close()
			p.mu.Lock()
			p.got = append(p.got, b)
			p.mu.Unlock()
		}
	}()
	return p
}

// prints returns the receipts printed so far.
func (p *printer) prints() [][]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.got)
}

// closedPort is a port on 127.0.0.1 nothing listens on: a printer that
// does not answer.
func closedPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return port
}
