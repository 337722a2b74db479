package egress

import (
	"context"
	"errors"
	"testing"
)

// TestConnectTimeCheck drives the dialer's Control with the address a
// socket is about to connect to: the last line of defence, whatever
// resolved the name. Every range of the table is refused, mapped forms
// included; public addresses pass; AllowLoopback opens loopback only.
func TestConnectTimeCheck(t *testing.T) {
	refused := []string{
		"0.0.0.0:443", "0.1.2.3:443", "10.0.0.1:443", "100.64.0.1:443", "100.100.100.200:80",
		"127.0.0.1:443", "127.255.255.254:443", "169.254.169.254:80", "172.16.0.1:443", "172.31.255.255:443",
		"192.0.0.1:443", "192.0.2.1:443", "192.88.99.1:443", "192.168.1.1:443", "198.18.0.1:443",
		"198.51.100.1:443", "203.0.113.1:443", "224.0.0.1:443", "239.255.255.250:1900", "240.0.0.1:443",
		"255.255.255.255:443",
		"[::]:443", "[::1]:443", "[::ffff:127.0.0.1]:443", "[::ffff:10.0.0.1]:443", "[::ffff:169.254.169.254]:80",
		"[::127.0.0.1]:443", "[64:ff9b::a00:1]:443", "[64:ff9b:1::1]:443", "[100::1]:443", "[2001::1]:443",
		"[2001:db8::1]:443", "[2002:7f00:1::1]:443", "[3fff::1]:443", "[5f00::1]:443", "[fc00::1]:443",
		"[fd00:ec2::254]:80", "[fe80::1]:443", "[fe80::1%eth0]:443", "[fec0::1]:443", "[ff02::1]:443",
		"not-an-address:443",
	}
	public := []string{"93.184.216.34:443", "8.8.8.8:443", "1.1.1.1:8443", "[2606:4700:4700::1111]:443", "[2a00:1450:4001::1]:443", "[::ffff:8.8.8.8]:443"}
	strict, loose := control(false), control(true)
	for _, a := range refused {
		if err := strict(context.Background(), "tcp", a, nil); !errors.Is(err, ErrBlocked) {
			t.Errorf("connect to %s: err = %v, want ErrBlocked", a, err)
		}
		loop := a == "127.0.0.1:443" || a == "127.255.255.254:443" || a == "[::1]:443" || a == "[::ffff:127.0.0.1]:443"
		if err := loose(context.Background(), "tcp", a, nil); loop != (err == nil) {
			t.Errorf("connect to %s with AllowLoopback: err = %v, want refused %v", a, err, !loop)
		}
	}
	for _, a := range public {
		if err := strict(context.Background(), "tcp", a, nil); err != nil {
			t.Errorf("connect to public %s: %v", a, err)
		}
	}
}
