package daemon

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The README's GSLB example (docs/examples/gslb) loads and answers as its
// README says: resolvers of each ISP get that ISP's address.
func TestGSLBExampleLoads(t *testing.T) {
	dir := filepath.Join("..", "docs", "examples", "gslb")
	e, g := openWithGSLB(t)
	s := e.NewSession("admin").(*Session)
	f, err := os.Open(filepath.Join(dir, "ltm.tmsh"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for sc := bufio.NewScanner(f); sc.Scan(); {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			if _, errText := run(t, s, line); errText != "" {
				t.Fatalf("%s: %s", line, errText)
			}
		}
	}
	// The example's listener address is the transcript's too, and package
	// tests run in parallel: listen elsewhere.
	text, err := os.ReadFile(filepath.Join(dir, "bigip_gtm.conf"))
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(t.TempDir(), "bigip_gtm.conf")
	if err := os.WriteFile(conf, []byte(strings.ReplaceAll(string(text), "address 127.0.110.53", "address 127.0.199.53")), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errText := run(t, s, "load sys config merge file "+conf); errText != "" {
		t.Fatal(errText)
	}
	for ldns, prefix := range map[string]string{"127.0.114.5": "127.0.112.", "127.0.115.5": "127.0.113."} {
		if got := ask(t, g, "www.example.com", ldns); !strings.HasPrefix(got, prefix) {
			t.Errorf("www.example.com asked from %s: %s, want %s*", ldns, got, prefix)
		}
	}
}
