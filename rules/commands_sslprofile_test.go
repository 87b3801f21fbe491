package rules

import (
	"errors"
	"strings"
	"testing"
)

// profileFake is a connection whose rules may choose profiles: known
// are the profiles it has, chosen what SSL::profile asked for.
type profileFake struct {
	*sslFake
	known  map[string]bool
	chosen []string
}

func (f *profileFake) SSLProfile(name string) error {
	if !f.known[name] {
		return errors.New("SSL::profile: " + name + ": no such client-ssl or server-ssl profile")
	}
	f.chosen = append(f.chosen, name)
	return nil
}

// TestSSLProfile runs SSL::profile as rules write it: one profile name,
// the connection's answer (its error a Tcl error the rule may catch), and
// a Tcl error on a virtual without TLS profiles.
func TestSSLProfile(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		plain        bool // the virtual has no client-ssl or server-ssl
		chosen       string
		err          string
	}{
		{"server side", `SSL::profile /Common/serverssl-b`, false, "/Common/serverssl-b", ""},
		{"by pool", `if {[LB::server pool] ne ""} { SSL::profile /Common/serverssl-b }`, false, "/Common/serverssl-b", ""},
		{"unknown", `SSL::profile /Common/nope`, false, "", "no such client-ssl or server-ssl profile"},
		{"caught", `if {[catch {SSL::profile /Common/nope} e]} { SSL::profile /Common/serverssl-b }`, false, "/Common/serverssl-b", ""},
		{"no args", `SSL::profile`, false, "", "wrong # args"},
		{"two args", `SSL::profile a b`, false, "", "wrong # args"},
		{"no TLS", `SSL::profile /Common/serverssl-b`, true, "", "no client-ssl or server-ssl profile"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fc := &fakeConn{}
			var conn Conn
			pf := &profileFake{sslFake: &sslFake{fakeConn: fc}, known: map[string]bool{"/Common/serverssl-b": true}}
			conn = pf
			if tc.plain {
				conn = fc
			}
			r := mustCompile(t, "r", "when CLIENT_ACCEPTED { "+tc.script+" }")
			s := NewProgram(nil, r).NewConnState(conn)
			defer s.Release()
			err := s.Run(ClientAccepted)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(pf.chosen, " "); got != tc.chosen {
				t.Errorf("chosen %q, want %q", got, tc.chosen)
			}
		})
	}
}

// TestChoosesSSLProfile: the commit builds the profiles a rule may
// name only for the virtuals whose rules say SSL::profile.
func TestChoosesSSLProfile(t *testing.T) {
	if NewProgram(nil, mustCompile(t, "a", `when SERVER_CONNECTED { SSL::disable }`)).ChoosesSSLProfile() {
		t.Error("a rule without SSL::profile chooses profiles")
	}
	p := NewProgram(nil, mustCompile(t, "a", `when CLIENT_ACCEPTED { }`), mustCompile(t, "b", `when LB_SELECTED { SSL::profile serverssl-b }`))
	if !p.ChoosesSSLProfile() {
		t.Error("a program whose second rule says SSL::profile does not choose profiles")
	}
	var nilProg *Program
	if nilProg.ChoosesSSLProfile() {
		t.Error("no program chooses profiles")
	}
}
