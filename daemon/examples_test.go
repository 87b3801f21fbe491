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
	// The example's addresses are the gslb_seed001 transcript's too (its
	// listener, its members' and its virtual servers'), and packages'
	// tests run at the same time: the example is loaded elsewhere.
	moved := strings.NewReplacer("127.0.110.", "127.0.196.", "127.0.112.", "127.0.197.", "127.0.113.", "127.0.198.")
	f, err := os.Open(filepath.Join(dir, "ltm.tmsh"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for sc := bufio.NewScanner(f); sc.Scan(); {
		if line := moved.Replace(strings.TrimSpace(sc.Text())); line != "" {
			if _, errText := run(t, s, line); errText != "" {
				t.Fatalf("%s: %s", line, errText)
			}
		}
	}
	text, err := os.ReadFile(filepath.Join(dir, "bigip_gtm.conf"))
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(t.TempDir(), "bigip_gtm.conf")
	if err := os.WriteFile(conf, []byte(moved.Replace(string(text))), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errText := run(t, s, "load sys config merge file "+conf); errText != "" {
		t.Fatal(errText)
	}
	for ldns, prefix := range map[string]string{"127.0.114.5": "127.0.197.", "127.0.115.5": "127.0.198."} {
		if got := ask(t, g, "www.example.com", ldns); !strings.HasPrefix(got, prefix) {
			t.Errorf("www.example.com asked from %s: %s, want %s*", ldns, got, prefix)
		}
	}
}
