package node

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"mime"
	"net"
	"net/smtp"
	"strconv"
	"strings"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/sqlite"
)

// Receipts (docs/receipts.md): the job that works off the durable outbox
// receipt_jobs. A print sends the receipt's ESC/POS bytes to its till's
// printer on raw TCP; an e-mail goes to the org's SMTP relay. Neither
// blocks a sale: the completion only queued them. A failed attempt is
// retried with a doubling pause (ReceiptRetry up to 5 min); a print gives
// up after printAttempts (its status says failed, the printer's
// unreachable), an e-mail after emailAttempts (about two days offline).

const (
	receiptBatch  = 20
	printAttempts = 12
	emailAttempts = 600
	maxRetryPause = 5 * time.Minute
	printTimeout  = 3 * time.Second
	smtpTimeout   = 10 * time.Second
)

// ReceiptJob sends queued prints and e-mails until the node stops.
func (n *Node) ReceiptJob() Job {
	poll := n.Config.ReceiptPoll
	if poll <= 0 {
		poll = time.Second
	}
	return Job{Name: "receipts", Run: func(ctx context.Context) error {
		t := time.NewTicker(poll)
		defer t.Stop()
		for {
			n.sendReceipts(ctx)
			select {
			case <-ctx.Done():
				return nil
			case <-t.C:
			case <-n.db.ReceiptJobsDue():
			}
		}
	}}
}

func (n *Node) sendReceipts(ctx context.Context) {
	tasks, err := n.db.DueReceiptJobs(ctx, n.now(), receiptBatch)
	if err != nil {
		n.log.Error("receipts: reading the outbox", slog.Any("err", err))
		return
	}
	for i := range tasks {
		t := &tasks[i]
		max := emailAttempts
		var runErr error
		if t.Kind == kassa.JobPrint {
			max, runErr = printAttempts, printReceipt(ctx, t)
		} else {
			runErr = emailReceipt(ctx, t)
		}
		if runErr != nil {
			// The relay's password is never in an error we log: net/smtp
			// reports the server's reply, not our credentials.
			n.log.Warn("receipts: attempt failed", "job", t.ID, "kind", t.Kind, "attempt", t.Attempts+1, slog.Any("err", runErr))
		}
		if err := n.db.FinishReceiptJob(ctx, t, runErr, n.now().Add(n.retryPause(t.Attempts)), max); err != nil {
			n.log.Error("receipts: recording an attempt", slog.Any("err", err))
		}
	}
}

func (n *Node) now() time.Time {
	if n.Config.Now != nil {
		return n.Config.Now()
	}
	return time.Now().UTC()
}

func (n *Node) retryPause(attempts int) time.Duration {
	d := n.Config.ReceiptRetry
	if d <= 0 {
		d = 5 * time.Second
	}
	for range min(attempts, 16) {
		d *= 2
		if d >= maxRetryPause {
			return maxRetryPause
		}
	}
	return d
}

// printReceipt writes the receipt to the printer: connect, write, close,
// each bounded, so a printer that does not answer costs one timeout.
func printReceipt(ctx context.Context, t *sqlite.ReceiptTask) error {
	p := t.Printer
	if !p.Enabled {
		return fmt.Errorf("the printer of till %s is disabled", p.RegisterID)
	}
	d := net.Dialer{Timeout: printTimeout}
	c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(p.Host, strconv.Itoa(p.Port)))
	if err != nil {
		return fmt.Errorf("printer %s:%d does not answer: %w", p.Host, p.Port, err)
	}
	defer c.Close()
	c.SetWriteDeadline(time.Now().Add(printTimeout))
	if _, err := c.Write(kassa.EscPos(t.Receipt, p.PaperWidth, t.Kick)); err != nil {
		return fmt.Errorf("printer %s:%d: %w", p.Host, p.Port, err)
	}
	return c.Close()
}

// emailReceipt hands the receipt to the relay. It is done once the relay
// accepted the DATA; a crash before that is marked sends it again with the
// same Message-ID (docs/receipts.md, "Exactly once").
func emailReceipt(ctx context.Context, t *sqlite.ReceiptTask) error {
	st := t.SMTP
	if st.SMTPHost == "" || st.SMTPFrom == "" {
		return fmt.Errorf("no SMTP relay is configured")
	}
	addr := net.JoinHostPort(st.SMTPHost, strconv.Itoa(st.SMTPPort))
	d := net.Dialer{Timeout: smtpTimeout}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("SMTP relay %s does not answer: %w", addr, err)
	}
	conn.SetDeadline(time.Now().Add(smtpTimeout))
	c, err := smtp.NewClient(conn, st.SMTPHost)
	if err != nil {
		conn.Close()
		return err
	}
	defer c.Close()
	if err := smtpHello(c, st); err != nil {
		return err
	}
	if err := c.Mail(st.SMTPFrom); err != nil {
		return err
	}
	if err := c.Rcpt(t.Email); err != nil {
		return err
	}
	w, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write(receiptMessage(t)); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	c.Quit()
	return nil
}

// smtpHello upgrades to TLS when the relay offers it and signs in when
// the org set a user (net/smtp's PLAIN refuses to send a password in the
// clear to anything but localhost).
func smtpHello(c *smtp.Client, st *kassa.ReceiptSettings) error {
	if err := c.Hello("kassa"); err != nil {
		return err
	}
	if ok, _ := c.Extension("STARTTLS"); ok {
		if err := c.StartTLS(&tls.Config{ServerName: st.SMTPHost}); err != nil {
			return err
		}
	}
	if st.SMTPUsername == "" {
		return nil
	}
	return c.Auth(smtp.PlainAuth("", st.SMTPUsername, st.SMTPPassword, st.SMTPHost))
}

func receiptMessage(t *sqlite.ReceiptTask) []byte {
	r := t.Receipt
	subject := "Your receipt " + r.Number
	if r.Store.Name != "" {
		subject += " from " + r.Store.Name
	}
	var b strings.Builder
	fmt.Fprintf(&b, "From: %s\r\nTo: %s\r\nSubject: %s\r\nMessage-ID: %s\r\nDate: %s\r\n", t.SMTP.SMTPFrom, t.Email,
		mime.QEncoding.Encode("utf-8", subject), t.MessageID, r.IssuedAt.Format(time.RFC1123Z))
	b.WriteString("MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n")
	b.WriteString(strings.ReplaceAll(kassa.ReceiptText(r, 80), "\n", "\r\n"))
	return []byte(b.String())
}
