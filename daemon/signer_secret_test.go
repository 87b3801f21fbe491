package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSignerKeyPassphraseSealed: the signer-key-passphrase of an OCSP
// cert-validator and of an ocsp-stapling-params profile is sealed with the
// master key, as BIG-IP keeps it: list and the saved file show the sealed
// form only, load reads it back, and the runtimes get the pass phrase
// revealed.
func TestSignerKeyPassphraseSealed(t *testing.T) {
	dir := t.TempDir()
	e := openTest(t, dir)
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	const pass = "kp-signer-1"
	mustRun(t, s,
		"create sys crypto key sk gen-certificate common-name signer.example passphrase "+pass,
		"create sys crypto cert-validator ocsp v1 responder-url http://127.245.0.9:20001 signer-cert sk signer-key sk signer-key-passphrase "+pass,
		"create ltm profile ocsp-stapling-params pp1 responder-url http://127.245.0.9:20001 signer-cert sk signer-key sk signer-key-passphrase "+pass,
	)
	sealed := func(where, text string) {
		t.Helper()
		if strings.Contains(text, pass) || strings.Count(text, "signer-key-passphrase $M$") != 2 {
			t.Errorf("%s: want both signer-key-passphrase sealed, the clear one nowhere:\n%s", where, text)
		}
	}
	list := func() string {
		out, _ := run(t, s, "list sys crypto cert-validator ocsp v1")
		more, _ := run(t, s, "list ltm profile ocsp-stapling-params pp1")
		return out + more
	}
	sealed("list", list())
	mustRun(t, s, "save sys config")
	b, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	sealed("the saved file", string(b))
	before := list()
	if out, errOut := run(t, s, "load sys config"); errOut != "" {
		t.Fatalf("load: %s\n%s", errOut, out)
	}
	if after := list(); after != before {
		t.Errorf("load changed the sealed pass phrases:\n%s\nwas\n%s", after, before)
	}
	// What the runtimes are handed holds the pass phrase again, after the
	// load as before it.
	revealed := e.reveal(e.Config())[0]
	for _, k := range []string{"sys crypto cert-validator ocsp", "ltm profile ocsp-stapling-params"} {
		name := "/Common/v1"
		if strings.HasPrefix(k, "ltm") {
			name = "/Common/pp1"
		}
		o := revealed.Get(e.schema.Kind(k), name)
		if o == nil || o.Props["signer-key-passphrase"] == nil || o.Props["signer-key-passphrase"].Str != pass {
			t.Errorf("%s %s: the revealed signer-key-passphrase is not the one given", k, name)
		}
	}
}
