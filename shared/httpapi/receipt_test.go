package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/textproto"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
	"kassa.dev/sync/freeport"
	"kassa.dev/sync/wait"
)

// Receipts (docs/receipts.md) through HTTP over a real store: a fake
// ESC/POS printer on 127.0.0.1 receives the bytes and the test decodes
// them; a real SMTP server (net/textproto) receives the e-mails.

// fakePrinter is a network thermal printer: it takes one print per
// connection, as a raw TCP port 9100 printer does.
type fakePrinter struct {
	ln     net.Listener
	prints chan []byte
}

func startPrinter(t *testing.T, addr string) *fakePrinter {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	p := &fakePrinter{ln: ln, prints: make(chan []byte, 16)}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b, _ := io.ReadAll(c)
			c.Close()
			p.prints <- b
		}
	}()
	return p
}

func (p *fakePrinter) port() int { return p.ln.Addr().(*net.TCPAddr).Port }

func (p *fakePrinter) next(t *testing.T) escPrint {
	t.Helper()
	select {
	case b := <-p.prints:
		return decodeEscPos(t, b)
	case <-time.After(10 * time.Second):
		t.Fatal("the printer received nothing within 10 s")
		return escPrint{}
	}
}

// escPrint is what a printer made of the bytes.
type escPrint struct {
	text     string
	kicks    int
	cut      bool // the last command cut the paper
	barcodes []string
}

// decodeEscPos reads the commands the encoder documents (kassa/escpos.go);
// any other control byte fails the test.
func decodeEscPos(t *testing.T, b []byte) escPrint {
	t.Helper()
	var p escPrint
	var text strings.Builder
	fixed := map[string]int{"\x1b\x40": 0, "\x1b\x61": 1, "\x1b\x45": 1, "\x1d\x21": 1, "\x1d\x68": 1, "\x1d\x77": 1, "\x1d\x48": 1}
	for i := 0; i < len(b); {
		c := b[i]
		if c == '\n' || (c >= 32 && c < 127) {
			text.WriteByte(c)
			p.cut = false
			i++
			continue
		}
		if i+1 >= len(b) {
			t.Fatalf("a lone control byte %#x at the end", c)
		}
		cmd := string(b[i : i+2])
		switch {
		case fixed[cmd] > 0 || cmd == "\x1b\x40":
			i += 2 + fixed[cmd]
		case cmd == "\x1b\x70":
			p.kicks++
			i += 5
		case cmd == "\x1d\x56":
			p.cut = true
			i += 4
		case cmd == "\x1d\x6b" && b[i+2] == 73:
			n := int(b[i+3])
			data := string(b[i+4 : i+4+n])
			if !strings.HasPrefix(data, "{B") {
				t.Fatalf("CODE128 data %q does not start in code set B", data)
			}
			p.barcodes = append(p.barcodes, data[2:])
			i += 4 + n
		default:
			t.Fatalf("unknown ESC/POS command % x at %d", b[i:i+2], i)
		}
	}
	p.text = text.String()
	return p
}

// freePort returns a loopback port nothing listens on (for now).
func freePort(t *testing.T) int {
	t.Helper()
	port, err := freeport.Pick()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

func fastReceipts(c *node.Config) { c.ReceiptPoll, c.ReceiptRetry = 20*time.Millisecond, time.Second }

// rcptSale is a paid order of two lattes (one with oat milk), paid in
// cash with 50.00 tendered.
func rcptSale(f *ordFixture, loc string) string {
	f.t.Helper()
	latte := f.product("Latte "+loc[len(loc)-4:], "LAT-"+loc[len(loc)-6:], 450)
	_, opts := f.group("Milk "+loc[len(loc)-4:], false, 0, 1, []ordOpt{{"Oat", 70, false}}, latte)
	o := f.order(map[string]any{"location_id": loc, "line_items": []any{
		map[string]any{"product_id": latte, "quantity": 2, "modifier_option_ids": []string{opts["Oat"]}}}})
	id := o["id"].(string)
	f.must(f.do("POST", "/payments/initiate", "", map[string]any{"order_id": id, "amount": ordNum(o["total"]), "method": "cash", "tendered": 5000}), 201)
	return id
}

func TestReceiptPrintsAtTheTillsPrinterWithDrawerKickAndBarcode(t *testing.T) {
	f := newOrdFixture(t, fastReceipts)
	printer := startPrinter(t, "127.0.0.1:0")
	// A register of the store with its drawer open: the refund below is
	// handed back there (docs/drawers.md), so its receipt is the till's.
	till := f.must(f.do("POST", "/registers", f.manager, map[string]any{"location_id": f.locA, "name": "Front till"}), 201).Data()["id"].(string)
	f.must(f.do("POST", "/drawers", f.manager, map[string]any{"register_id": till, "float": map[string]any{"amount": 10000}}), 201)
	f.must(f.do("PATCH", "/receipt-settings", f.manager, map[string]any{"header": "Welcome!", "footer": "Thank you", "tax_id": "ABN 12 345"}), 200)
	f.must(f.do("PUT", "/registers/"+till+"/printer", f.manager, map[string]any{"host": "127.0.0.1", "port": printer.port(), "paper_width": 58}), 200)
	id := rcptSale(f, f.locA)

	o := f.must(f.do("POST", "/orders/"+id+"/complete", f.cashier, map[string]any{"register_id": till}), 200).Data()
	r := f.must(f.do("GET", "/orders/"+id+"/receipt", f.cashier, nil), 200).Data()
	if !regexp.MustCompile(`^[0-9A-F]{6}-\d+-000001$`).MatchString(r["number"].(string)) || r["kind"] != "sale" || r["register_id"] != till {
		t.Fatalf("receipt %v", r)
	}
	p := printer.next(t)
	for _, want := range []string{"Shop A", "Welcome!", "Tax ID ABN 12 345", "Receipt " + r["number"].(string), "2 x Latte",
		"+ Oat", "TOTAL AUD", "Cash", "tendered", "50.00", "change", "Thank you"} {
		if !strings.Contains(p.text, want) {
			t.Errorf("the print lacks %q:\n%s", want, p.text)
		}
	}
	for _, l := range strings.Split(p.text, "\n") {
		if len(l) > 32 {
			t.Errorf("a line wider than 58 mm paper (32 columns): %q", l)
		}
	}
	if p.kicks != 1 || !p.cut || fmt.Sprint(p.barcodes) != "["+o["number"].(string)+"]" {
		t.Fatalf("kicks %d, cut %v, barcodes %v (order %s)", p.kicks, p.cut, p.barcodes, o["number"])
	}
	wait.For(t, 5*time.Second, "the print marked done", func() bool {
		jobs := f.do("GET", "/orders/"+id+"/receipt", f.cashier, nil).Data()["jobs"].([]any)
		return len(jobs) == 1 && jobs[0].(map[string]any)["status"] == "done"
	})
	if st := f.must(f.do("GET", "/registers/"+till+"/printer", f.cashier, nil), 200).Data(); st["status"] != "ok" {
		t.Fatalf("printer status %v", st)
	}

	// A reprint never opens the drawer.
	f.must(f.do("POST", "/orders/"+id+"/receipt/print", f.cashier, nil), 202)
	if p := printer.next(t); p.kicks != 0 || !p.cut {
		t.Fatalf("reprint: kicks %d cut %v", p.kicks, p.cut)
	}

	// A refund at the same till takes the till's next number, prints, and
	// opens the drawer (cash goes back).
	f.must(f.do("POST", "/orders/"+id+"/refund", f.manager, map[string]any{"amount": 100, "register_id": till}), 200)
	refund := f.get(id)["refunds"].([]any)[0].(map[string]any)["id"].(string)
	rr := f.must(f.do("GET", "/orders/"+id+"/receipt?refund_id="+refund, f.cashier, nil), 200).Data()
	if want := strings.TrimSuffix(r["number"].(string), "1") + "2"; rr["number"] != want || rr["kind"] != "refund" || ordNum(rr["total"]) != 100 {
		t.Fatalf("refund receipt %v, want number %s", rr, want)
	}
	if p := printer.next(t); p.kicks != 1 || !strings.Contains(p.text, "REFUND "+rr["number"].(string)) {
		t.Fatalf("refund print: kicks %d\n%s", p.kicks, p.text)
	}
}

func TestReceiptHTMLForPaperWidthsLoadsNothing(t *testing.T) {
	f := newOrdFixture(t, fastReceipts)
	id := rcptSale(f, f.locA)
	f.complete(id)
	for _, w := range []string{"58", "80"} {
		r := f.do("GET", "/orders/"+id+"/receipt?format=html&width="+w, f.cashier, nil)
		if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("%d %s: %s", r.Status, r.Header.Get("Content-Type"), r.Body)
		}
		page := string(r.Body)
		if !strings.Contains(page, `class="r w`+w+`"`) || !strings.Contains(page, "<svg") || !strings.Contains(page, "Oat") ||
			!strings.Contains(page, "change") {
			t.Fatalf("page for %s mm:\n%s", w, page)
		}
		if regexp.MustCompile(`(?i)(src|href)=`).MatchString(page) {
			t.Fatalf("the page loads something:\n%s", page)
		}
		if csp := r.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "style-src 'sha256-") {
			t.Fatalf("CSP %q", csp)
		}
	}
	mustProblem(t, f.do("GET", "/orders/"+id+"/receipt?format=html&width=90", f.cashier, nil), 400, "bad-request")
	mustProblem(t, f.do("GET", "/orders/"+id+"/receipt?format=pdf", f.cashier, nil), 400, "bad-request")
	// An open order has no receipt yet; another org never sees this one.
	open := f.simpleOrder(f.locA, f.product("Tea", "TEA-1", 300), 1)["id"].(string)
	mustProblem(t, f.do("GET", "/orders/"+open+"/receipt", f.cashier, nil), 404, "not-found")
	other := f.tn.MustOrg("Other Cafe")
	mustProblem(t, f.tn.Do("GET", "/api/v1/orders/"+id+"/receipt", other.Owner, nil), 404, "not-found")
}

func TestReceiptNumbersHaveNoGapsUnderConcurrentCompletions(t *testing.T) {
	f := newOrdFixture(t, fastReceipts)
	latte := f.product("Latte", "LAT-1", 450)
	tills := []string{f.create("/registers", map[string]any{"location_id": f.locA, "name": "Till A"}),
		f.create("/registers", map[string]any{"location_id": f.locA, "name": "Till B"})}
	var reqs [][2]string
	var bodies []any
	for i := range 24 {
		o := f.simpleOrder(f.locA, latte, 1)
		if i%3 != 2 { // every third is unpaid: its completion fails and must take no number
			f.payCash(o["id"].(string), ordNum(o["total"]))
		}
		reqs = append(reqs, [2]string{"POST", "/orders/" + o["id"].(string) + "/complete"})
		bodies = append(bodies, map[string]any{"register_id": tills[i%2]})
	}
	statuses := make([]int, len(reqs))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			statuses[i], _, _ = ordRawDo(f.tn, "POST", reqs[i][1], f.cashier, bodies[i])
		}()
	}
	close(start)
	wg.Wait()
	if ordCount(statuses, 200) != 16 || ordCount(statuses, 409) != 8 {
		t.Fatalf("statuses %v", statuses)
	}
	seqs := map[string][]int{}
	for i, rq := range reqs {
		id := strings.TrimSuffix(strings.TrimPrefix(rq[1], "/orders/"), "/complete")
		r := f.do("GET", "/orders/"+id+"/receipt", f.cashier, nil)
		if statuses[i] != 200 {
			mustProblem(t, r, 404, "not-found")
			continue
		}
		num := r.Data()["number"].(string)
		cut := strings.LastIndex(num, "-")
		n, err := strconv.Atoi(num[cut+1:])
		if err != nil {
			t.Fatal(err)
		}
		seqs[num[:cut]] = append(seqs[num[:cut]], n)
	}
	if len(seqs) != 2 {
		t.Fatalf("sequences %v, want one per till", seqs)
	}
	for code, ns := range seqs {
		seen := map[int]bool{}
		for _, n := range ns {
			seen[n] = true
		}
		for n := 1; n <= 8; n++ {
			if !seen[n] || len(ns) != 8 {
				t.Fatalf("sequence %s: %v, want 1-8 without gaps or repeats", code, ns)
			}
		}
	}
	// A till id that is not one is refused and completes nothing.
	o := f.paidOrder(f.locA, latte, 1)
	mustProblem(t, f.do("POST", "/orders/"+o["id"].(string)+"/complete", f.cashier, map[string]any{"register_id": "till 1!"}), 422, "validation")
	// So is a till that is not a register of the order's location: one
	// at another store of the org, another org's, one never made. Nothing
	// changes, no number is taken.
	elsewhere := f.create("/registers", map[string]any{"location_id": f.locB, "name": "Till at B"})
	other := f.tn.MustOrg("Other Cafe")
	theirLoc := f.tn.Do("POST", "/api/v1/locations", other.Owner, map[string]any{"name": "Theirs", "timezone": "UTC"}).Data()["id"]
	theirs := f.tn.Do("POST", "/api/v1/registers", other.Owner, map[string]any{"location_id": theirLoc, "name": "Their till"}).Data()["id"].(string)
	for _, reg := range []string{elsewhere, theirs, "no-such-till"} {
		mustProblem(t, f.do("POST", "/orders/"+o["id"].(string)+"/complete", f.cashier, map[string]any{"register_id": reg}), 422, "validation")
	}
	if f.get(o["id"].(string))["status"] != "open" {
		t.Fatal("a refused completion changed the order")
	}
	f.must(f.do("POST", "/orders/"+o["id"].(string)+"/complete", f.cashier, map[string]any{"register_id": tills[0]}), 200)
	if n := f.do("GET", "/orders/"+o["id"].(string)+"/receipt", f.cashier, nil).Data()["number"].(string); !strings.HasSuffix(n, "-000009") {
		t.Fatalf("after refused completions the till's next receipt is %s, want its 9th", n)
	}
}

func TestReceiptPrinterThatDoesNotAnswerNeverBlocksTheSale(t *testing.T) {
	f := newOrdFixture(t, fastReceipts)
	port := freePort(t)
	till1 := f.create("/registers", map[string]any{"location_id": f.locA, "name": "Till 1"})
	till2 := f.create("/registers", map[string]any{"location_id": f.locA, "name": "Till 2"})
	f.must(f.do("PUT", "/registers/"+till1+"/printer", f.manager, map[string]any{"host": "127.0.0.1", "port": port}), 200)
	mustProblem(t, f.do("PUT", "/registers/"+till2+"/printer", f.cashier, map[string]any{"host": "127.0.0.1"}), 403, "forbidden")
	mustProblem(t, f.do("PUT", "/registers/"+till2+"/printer", f.manager, map[string]any{"host": "127.0.0.1", "paper_width": 60}), 422, "validation")
	mustProblem(t, f.do("PUT", "/registers/no-such-till/printer", f.manager, map[string]any{"host": "127.0.0.1"}), 404, "not-found")
	id := rcptSale(f, f.locA)
	start := time.Now()
	f.must(f.do("POST", "/orders/"+id+"/complete", f.cashier, map[string]any{"register_id": till1}), 200)
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("the completion waited %s on the printer", d)
	}
	wait.For(t, 10*time.Second, "the printer reported unreachable", func() bool {
		st := f.do("GET", "/registers/"+till1+"/printer", f.cashier, nil).Data()
		return st["status"] == "unreachable" && st["last_error"] != "" && ordNum(st["pending"]) == 1
	})
	job := f.do("GET", "/orders/"+id+"/receipt", f.cashier, nil).Data()["jobs"].([]any)[0].(map[string]any)
	if job["status"] != "pending" || ordNum(job["attempts"]) < 1 || job["last_error"] == "" {
		t.Fatalf("print job %v", job)
	}
	// The printer comes back: the retry prints once it is due.
	printer := startPrinter(t, fmt.Sprintf("127.0.0.1:%d", port))
	f.tn.Clock.Advance(time.Minute)
	if p := printer.next(t); p.kicks != 1 || !p.cut {
		t.Fatalf("retried print: kicks %d cut %v", p.kicks, p.cut)
	}
	wait.For(t, 5*time.Second, "the printer back to ok", func() bool {
		st := f.do("GET", "/registers/"+till1+"/printer", f.cashier, nil).Data()
		return st["status"] == "ok" && ordNum(st["pending"]) == 0
	})
}

// smtpServer is a minimal SMTP server (RFC 5321's commands a client
// sends) that keeps every message it accepted.
type smtpServer struct {
	ln   net.Listener
	mu   sync.Mutex
	msgs []string
}

func startSMTP(t *testing.T, addr string) *smtpServer {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	s := &smtpServer{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(c)
		}
	}()
	return s
}

func (s *smtpServer) serve(c net.Conn) {
	defer c.Close()
	tp := textproto.NewConn(c)
	tp.PrintfLine("220 test ESMTP")
	for {
		l, err := tp.ReadLine()
		if err != nil {
			return
		}
		switch verb := strings.ToUpper(strings.SplitN(l, " ", 2)[0]); verb {
		case "EHLO":
			tp.PrintfLine("250-test\r\n250 8BITMIME")
		case "HELO", "MAIL", "RCPT", "RSET", "NOOP":
			tp.PrintfLine("250 OK")
		case "DATA":
			tp.PrintfLine("354 go on")
			b, err := tp.ReadDotBytes()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.msgs = append(s.msgs, string(b))
			s.mu.Unlock()
			tp.PrintfLine("250 queued")
		case "QUIT":
			tp.PrintfLine("221 bye")
			return
		default:
			tp.PrintfLine("502 not here")
		}
	}
}

func (s *smtpServer) messages() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.msgs...)
}

// lockedBuf is a log sink the node writes to from its goroutines.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *lockedBuf) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

func TestReceiptEmailSentExactlyOnceAfterRelayOutageAndRestart(t *testing.T) {
	dir, port := t.TempDir(), freePort(t)
	var logs lockedBuf
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	tweak := func(c *node.Config) { fastReceipts(c); c.DataDir = dir }
	tn := MustStartNodeLog(t, kassa.NodeEdge, tweak, log)
	f := ordFixtureOn(t, tn)
	const secret = "s3cret-relay-pass"
	st := f.must(f.do("PATCH", "/receipt-settings", f.manager, map[string]any{"smtp_host": "127.0.0.1", "smtp_port": port,
		"smtp_from": "shop@order.test", "smtp_password": secret, "smtp_username": ""}), 200)
	if strings.Contains(string(st.Body), secret) || st.Data()["smtp_password_set"] != true {
		t.Fatalf("settings answer: %s", st.Body)
	}
	id := rcptSale(f, f.locA)
	f.complete(id)
	mustProblem(t, f.do("POST", "/orders/"+id+"/receipt/email", f.cashier, map[string]any{"email": "not an address"}), 422, "validation")
	f.must(f.do("POST", "/orders/"+id+"/receipt/email", f.cashier, map[string]any{"email": "ann@example.com"}), 202)
	number := f.do("GET", "/orders/"+id+"/receipt", f.cashier, nil).Data()["number"].(string)
	wait.For(t, 10*time.Second, "a failed attempt while the relay is down", func() bool {
		jobs := f.do("GET", "/orders/"+id+"/receipt", f.cashier, nil).Data()["jobs"].([]any)
		return len(jobs) == 1 && ordNum(jobs[0].(map[string]any)["attempts"]) >= 1
	})

	// The edge restarts; then the relay comes back.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := tn.N.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	tn = MustStartNodeLog(t, kassa.NodeEdge, tweak, log)
	f.tn = tn
	relay := startSMTP(t, fmt.Sprintf("127.0.0.1:%d", port))
	f.cashier = tn.MustLogin("c@order.test", testPassword)["accessToken"].(string)
	tn.Clock.Advance(time.Minute) // the retry is due
	wait.For(t, 10*time.Second, "the e-mail marked done", func() bool {
		r := f.do("GET", "/orders/"+id+"/receipt", f.cashier, nil)
		if r.Status != 200 {
			t.Fatalf("after the restart: %d %s", r.Status, r.Body)
		}
		jobs := r.Data()["jobs"].([]any)
		return jobs[0].(map[string]any)["status"] == "done"
	})
	msgs := relay.messages()
	if len(msgs) != 1 {
		t.Fatalf("%d messages, want 1", len(msgs))
	}
	m, err := textproto.NewReader(bufio.NewReader(strings.NewReader(msgs[0]))).ReadMIMEHeader()
	if err != nil {
		t.Fatal(err)
	}
	if m.Get("To") != "ann@example.com" || !strings.HasPrefix(m.Get("Message-Id"), "<receipt-") || !strings.Contains(msgs[0], number) {
		t.Fatalf("message:\n%s", msgs[0])
	}
	if strings.Contains(logs.String(), secret) {
		t.Fatal("the relay password is in the log")
	}
	// Without a relay configured, an e-mail is refused at once.
	other := tn.MustOrg("Other Cafe")
	mustProblem(t, tn.Do("POST", "/api/v1/orders/"+id+"/receipt/email", other.Owner, map[string]any{"email": "ann@example.com"}), 404, "not-found")
}

func TestReceiptShowsEveryTenderAndTheLoyaltyBalance(t *testing.T) {
	f := newGiftFixture(t)
	f.create("/loyalty/programs", map[string]any{"name": "Beans", "points_per_unit": 1, "redemption_value": 10})
	cust := f.customer("Ann")
	f.create("/loyalty/accounts", map[string]any{"customer_id": cust})
	card := f.issue(5000, nil)
	o := f.order(map[string]any{"location_id": f.locA, "customer_id": cust,
		"line_items": []any{map[string]any{"product_id": f.product, "quantity": 3}}})
	id, total := o["id"].(string), ordNum(o["total"])
	f.must(f.payGift(id, 1000, card["code"].(string)), 201)
	f.must(f.payCard(id, 1000, "4242 4242 4242 4242", true), 201)
	f.must(f.do("POST", "/payments/initiate", "", map[string]any{"order_id": id, "amount": total - 2000, "method": "cash", "tendered": total - 2000 + 500}), 201)
	done := f.complete(id)
	r := f.must(f.do("GET", "/orders/"+id+"/receipt", f.cashier, nil), 200).Data()
	pays := r["payments"].([]any)
	if len(pays) != 3 {
		t.Fatalf("payments %v", pays)
	}
	gift, cardPay, cash := pays[0].(map[string]any), pays[1].(map[string]any), pays[2].(map[string]any)
	code := card["code"].(string)
	if gift["gift_card"] != "**** "+code[len(code)-4:] || ordNum(gift["gift_card_balance"]) != 4000 || strings.Contains(string(f.do("GET", "/orders/"+id+"/receipt", f.cashier, nil).Body), code) {
		t.Fatalf("gift card tender %v (the full code must never show)", gift)
	}
	if cardPay["card"] != "**** 4242" || ordNum(cash["change"]) != 500 || ordNum(cash["tendered"]) != total-2000+500 {
		t.Fatalf("card %v cash %v", cardPay, cash)
	}
	loyalty := r["loyalty"].(map[string]any)
	if ordNum(loyalty["earned"]) != ordNum(done["loyalty_points_earned"]) || ordNum(loyalty["balance"]) != ordNum(done["loyalty_points_earned"]) || ordNum(loyalty["earned"]) == 0 {
		t.Fatalf("loyalty %v, order earned %v", loyalty, done["loyalty_points_earned"])
	}
	taxes := r["taxes"].([]any)[0].(map[string]any)
	if ordNum(taxes["tax"]) != ordNum(done["tax_total"]) || ordNum(taxes["net"])+ordNum(taxes["tax"]) != total || ordNum(r["total"]) != total {
		t.Fatalf("taxes %v, order tax %v total %d", taxes, done["tax_total"], total)
	}
}
