package hubonly

import (
	"context"
	"net/http"

	"kassa.dev/shared/egress"
)

// WebhookEgress returns what the hub's webhook sender needs to reach
// partners' URLs safely (package egress): the HTTP client, which checks
// every address when it connects and follows no redirect, and the
// registration check, which answers a kassa EInvalid error naming "url".
// opt.AllowLoopback is --webhook-allow-loopback: development and tests
// only.
func WebhookEgress(opt egress.Options) (*http.Client, func(ctx context.Context, rawURL string) error) {
	return egress.Client(opt), func(ctx context.Context, rawURL string) error {
		return egress.CheckURL(ctx, rawURL, opt)
	}
}
