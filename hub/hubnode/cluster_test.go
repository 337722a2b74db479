package hubnode

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHubClusterTakesItsSecretOnlyFromAFileOrTheEnvironment: a clustered
// hub without a secret, with a short one, or with one given as a flag
// (which ps would show) does not start, and says why.
func TestHubClusterTakesItsSecretOnlyFromAFileOrTheEnvironment(t *testing.T) {
	short := filepath.Join(t.TempDir(), "short")
	os.WriteFile(short, []byte("too-short\n"), 0o600)
	for name, c := range map[string]struct {
		args []string
		env  map[string]string
		want string
	}{
		"no secret":        {nil, nil, "secret of at least 32"},
		"short file":       {[]string{"--cluster-secret-file", short}, nil, "secret of at least 32"},
		"short env":        {nil, map[string]string{ClusterSecretEnv: "short"}, "secret of at least 32"},
		"secret as a flag": {[]string{"--cluster-secret", strings.Repeat("s", 40)}, nil, "flag provided but not defined"},
		"routes alone":     {[]string{"--cluster-routes", "127.0.0.1:1"}, nil, "need --cluster-listen"},
	} {
		args := append([]string{"--data-dir", t.TempDir(), "--http-addr", "127.0.0.1:0", "--leaf-port", "-1"}, c.args...)
		if name != "routes alone" {
			args = append(args, "--cluster-listen", "127.0.0.1:0")
		}
		err := Run(t.Context(), args, func(k string) string { return c.env[k] }, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, c.want)
		}
	}
}
