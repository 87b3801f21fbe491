package sipmsg

import (
	"fmt"
	"testing"
	"time"
)

// TestRegistrar: the bounds a TCP connection and a UDP flow both apply,
// step by step on one client's registrations.
func TestRegistrar(t *testing.T) {
	register := func(aor, fields string) string {
		return fmt.Sprintf("REGISTER sip:r SIP/2.0\r\nVia: SIP/2.0/UDP c;branch=z9hG4bK%s\r\nTo: <sip:%s@r>\r\nCall-ID: reg-%s\r\n%sContent-Length: 0\r\n\r\n", aor, aor, aor, fields)
	}
	invite := func(from, callID, toTag string) string {
		return fmt.Sprintf("INVITE sip:b@r SIP/2.0\r\nVia: SIP/2.0/UDP c;branch=z9hG4bK%s\r\nFrom: <sip:%s@r>;tag=f\r\nTo: <sip:b@r>%s\r\nCall-ID: %s\r\nContent-Length: 0\r\n\r\n", callID, from, toTag, callID)
	}
	lim := RegLimits{Max: 2, Timeout: 100 * time.Second, SessionsPer: 1}
	sec := int64(time.Second)
	g := NewRegistrar()
	open := map[string]bool{}
	for _, st := range []struct {
		name, msg string
		at        int64 // seconds
		release   string
		want      string // "" admitted, "503", or the aor counted
	}{
		{"first registration", register("a", ""), 0, "", ""},
		{"second registration", register("b", "Expires: 10\r\n"), 0, "", ""},
		{"third is over max-registrations", register("c", ""), 1, "", "503"},
		{"renewing a known one is not bounded", register("a", ""), 1, "", ""},
		{"an INVITE from a registered address counts", invite("a", "call1", ""), 2, "", "sip:a@r"},
		{"its retransmission is not counted again", invite("a", "call1", ""), 2, "", ""},
		{"a second dialog is over max-sessions-per-registration", invite("a", "call2", ""), 3, "", "503"},
		{"a request inside a dialog is not bounded", invite("a", "call2", ";tag=t"), 3, "", ""},
		{"an unregistered address is not bounded", invite("z", "call3", ""), 3, "", ""},
		{"once the first dialog ends a new one opens", invite("a", "call4", ""), 4, "sip:a@r", "sip:a@r"},
		{"b expired at 10 s: c takes its place", register("c", ""), 11, "", ""},
		{"expires=0 ends a registration", register("c", "Contact: <sip:c@h>;expires=0\r\n"), 12, "", ""},
		{"which frees a place", register("d", ""), 12, "", ""},
		{"registration-timeout caps what is asked", register("a", "Expires: 3600\r\n"), 12, "", ""},
		{"a ended at 112 s, its dialog released: e registers", register("e", ""), 113, "sip:a@r", ""},
	} {
		m, err := Parse([]byte(st.msg))
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		g.Release(st.release)
		no, aor := g.Admit(&m, lim, st.at*sec, func(cid []byte) bool { return open[string(cid)] })
		got := aor
		if no != nil {
			got = "503"
			if nm, err := Parse(no); err != nil || nm.Request || nm.Code != 503 {
				t.Fatalf("%s: reject %q is not a 503 answer (%v)", st.name, no, err)
			}
		}
		if got != st.want {
			t.Fatalf("%s: got %q, want %q", st.name, got, st.want)
		}
		if aor != "" {
			cid, _ := m.Header(CallID)
			open[string(cid)] = true
		}
	}
	var nilReg *Registrar
	nilReg.Release("a") // a profile without bounds
}
