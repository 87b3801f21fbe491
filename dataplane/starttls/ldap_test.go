package starttls

import (
	"bytes"
	"testing"
)

// ldapReq is a request message: op's tag and contents.
func ldapReq(id int64, tag byte, body []byte) []byte { return LDAPMessage(id, tag, body) }

func TestLDAPFrame(t *testing.T) {
	long := LDAPMessage(7, ldapSearchReq, bytes.Repeat([]byte{0x04}, 300))
	for _, tc := range []struct {
		name string
		in   []byte
		want int64
		err  bool
	}{
		{"empty", nil, 0, false},
		{"tag only", []byte{0x30}, 0, false},
		{"short form", []byte{0x30, 0x05}, 7, false},
		{"long form, partial", []byte{0x30, 0x82, 0x01}, 0, false},
		{"long form", long[:4], int64(len(long)), false},
		{"not a sequence", []byte{0x16, 0x03, 0x01}, 0, true},
		{"indefinite", []byte{0x30, 0x80}, 0, true},
		{"five length bytes", []byte{0x30, 0x85, 1, 2, 3, 4, 5}, 0, true},
		{"over 2 GiB", []byte{0x30, 0x84, 0x80, 0, 0, 0}, 0, true},
	} {
		got, err := LDAPFrame(tc.in)
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("%s: LDAPFrame = %d, %v; want %d, error %v", tc.name, got, err, tc.want, tc.err)
		}
	}
}

func TestLDAPSession(t *testing.T) {
	startTLS := LDAPStartTLSRequest(1)
	bind := ldapReq(2, ldapBindReq, []byte{0x02, 0x01, 0x03, 0x04, 0x00, 0x80, 0x00})
	search := ldapReq(3, ldapSearchReq, []byte{0x04, 0x00})
	unbind := ldapReq(4, ldapUnbindReq, nil)
	whoami := LDAPMessage(5, ldapExtReq, berAppend(nil, 0x80, []byte("1.3.6.1.4.1.4203.1.11.3")))
	type step struct {
		client  []byte // or
		server  []byte
		tls     bool
		fwd     bool
		code    int // of the virtual's answer; -1: none
		tlsNext bool
	}
	none := -1
	for _, tc := range []struct {
		name  string
		mode  Mode
		steps []step
	}{
		{"allow: StartTLS answered, then a second refused", Allow, []step{
			{client: startTLS, code: LDAPSuccess, tlsNext: true},
			{tls: true},
			{client: bind, fwd: true, code: none},
			{client: LDAPStartTLSRequest(6), code: LDAPOperationsError},
		}},
		{"allow: plaintext passes", Allow, []step{
			{client: bind, fwd: true, code: none},
			{client: whoami, fwd: true, code: none},
		}},
		{"allow: StartTLS with an operation outstanding", Allow, []step{
			{client: search, fwd: true, code: none},
			{client: startTLS, code: LDAPOperationsError},
			{server: LDAPResponse(3, ldapSearchDone, 0, "", "")},
			{client: startTLS, code: LDAPSuccess, tlsNext: true},
		}},
		{"allow: an entry does not end a search", Allow, []step{
			{client: search, fwd: true, code: none},
			{server: LDAPMessage(3, 0x64, []byte{0x04, 0x00, 0x30, 0x00})},
			{client: startTLS, code: LDAPOperationsError},
		}},
		{"allow: an abandoned search ends", Allow, []step{
			{client: search, fwd: true, code: none},
			{client: ldapReq(9, ldapAbandonReq, []byte{3}), fwd: true, code: none},
			{client: startTLS, code: LDAPSuccess, tlsNext: true},
		}},
		{"require: refused before TLS, unbind passes", Require, []step{
			{client: bind, code: LDAPConfidentialityRequire},
			{client: search, code: LDAPConfidentialityRequire},
			{client: whoami, code: LDAPConfidentialityRequire},
			{client: unbind, fwd: true, code: none},
		}},
		{"require: passes after TLS", Require, []step{
			{client: startTLS, code: LDAPSuccess, tlsNext: true},
			{tls: true},
			{client: bind, fwd: true, code: none},
		}},
		{"garbage passes to the member", Allow, []step{
			{client: []byte{0x30, 0x03, 0x01, 0x01, 0x00}, fwd: true, code: none},
		}},
	} {
		s := NewLDAPSession(tc.mode)
		for i, st := range tc.steps {
			switch {
			case st.tls:
				s.TLSStarted()
				continue
			case st.server != nil:
				s.FromServer(st.server)
				continue
			}
			c := s.FromClient(st.client, true)
			code := none
			if c.Reply != nil {
				id, op, rc, ok := LDAPResult(c.Reply)
				wantID, reqOp, _ := LDAPHead(st.client)
				if !ok || id != wantID || op != ldapAnswerTag(reqOp) {
					t.Errorf("%s: step %d: answer %x", tc.name, i, c.Reply)
				}
				code = rc
			}
			if c.Forward != st.fwd || code != st.code || c.StartTLS != st.tlsNext {
				t.Errorf("%s: step %d: forward %v, code %d, starttls %v; want %v, %d, %v", tc.name, i, c.Forward, code, c.StartTLS, st.fwd, st.code, st.tlsNext)
			}
		}
	}
}

// TestLDAPAnswers: the virtual's answers are what an LDAP client reads:
// StartTLS's names its operation, a refused search is a SearchResultDone.
func TestLDAPAnswers(t *testing.T) {
	s := NewLDAPSession(Require)
	c := s.FromClient(LDAPStartTLSRequest(300), true)
	if name, ok := ldapExtName(c.Reply, 0x8a); !ok || name != StartTLSOID {
		t.Errorf("StartTLS answer names %q", name)
	}
	if code, ok := LDAPStartTLSAnswer(c.Reply, 300); !ok || code != 0 {
		t.Errorf("StartTLS answer: %d %v", code, ok)
	}
	c = NewLDAPSession(Require).FromClient(LDAPMessage(70000, ldapSearchReq, []byte{0x04, 0x00}), true)
	if id, op, code, ok := LDAPResult(c.Reply); !ok || id != 70000 || op != ldapSearchDone || code != LDAPConfidentialityRequire {
		t.Errorf("refused search: %d %x %d %v", id, op, code, ok)
	}
	// A long message read in part: its head suffices.
	big := LDAPMessage(8, ldapBindReq, bytes.Repeat([]byte{0x04}, 40000))
	if c := NewLDAPSession(Require).FromClient(big[:LDAPHeadMax], false); c.Forward || c.Reply == nil {
		t.Errorf("a long bind under require: %+v", c)
	}
}

// FuzzLDAPFrame feeds any bytes to the framing and to a session, as a
// client's and a member's stream: nothing panics, frames are never
// shorter than their header, and the virtual's answers are messages that
// frame to their own length.
func FuzzLDAPFrame(f *testing.F) {
	f.Add(LDAPStartTLSRequest(1))
	f.Add(append(LDAPMessage(2, ldapSearchReq, []byte{0x04, 0x00}), LDAPStartTLSRequest(3)...))
	f.Add([]byte{0x30, 0x84, 0x7f, 0xff, 0xff, 0xff})
	f.Add(LDAPResponse(1, ldapExtResp, 0, "", StartTLSOID))
	f.Fuzz(func(t *testing.T, in []byte) {
		for m := None; m <= Require; m++ {
			s := NewLDAPSession(m)
			b := in
			for i := 0; len(b) > 0 && i < 64; i++ {
				n, err := LDAPFrame(b)
				if err != nil || n == 0 {
					break
				}
				if n < 2 {
					t.Fatalf("frame of %d bytes", n)
				}
				msg := b[:min(int64(len(b)), n)]
				whole := int64(len(msg)) == n
				if i%2 == 0 {
					c := s.FromClient(msg, whole)
					if c.Reply != nil {
						if k, err := LDAPFrame(c.Reply); err != nil || k != int64(len(c.Reply)) {
							t.Fatalf("answer %x frames to %d, %v", c.Reply, k, err)
						}
						if c.StartTLS {
							s.TLSStarted()
						}
					}
				} else {
					s.FromServer(msg)
				}
				LDAPStartTLSAnswer(msg, 1)
				if !whole {
					break
				}
				b = b[n:]
			}
		}
	})
}
