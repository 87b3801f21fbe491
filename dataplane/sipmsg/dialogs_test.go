package sipmsg

import (
	"fmt"
	"testing"
	"time"
)

// TestDialogs: a dialog's life as TCP and UDP proxies follow it, step by
// step: begun by its request, established by a 2xx, kept by the session
// timer, ended by a BYE's answer or a failure, forgotten when a timer
// runs out, its registration's session freed each time.
func TestDialogs(t *testing.T) {
	req := func(meth, cid, toTag string) string {
		return fmt.Sprintf("%s sip:b@r SIP/2.0\r\nVia: SIP/2.0/UDP c;branch=z9hG4bK%s%s\r\nFrom: <sip:a@r>;tag=f\r\nTo: <sip:b@r>%s\r\nCall-ID: %s\r\nCSeq: 1 %s\r\nContent-Length: 0\r\n\r\n", meth, cid, meth, toTag, cid, meth)
	}
	resp := func(code int, meth, cid string) string {
		return fmt.Sprintf("SIP/2.0 %d X\r\nVia: SIP/2.0/UDP c;branch=z9hG4bK%s%s\r\nFrom: <sip:a@r>;tag=f\r\nTo: <sip:b@r>;tag=t\r\nCall-ID: %s\r\nCSeq: 1 %s\r\nContent-Length: 0\r\n\r\n", code, cid, meth, cid, meth)
	}
	parse := func(s string) *Message {
		m, err := Parse([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return &m
	}
	const establish, session = 10 * time.Second, 100 * time.Second
	sec := int64(time.Second)
	ds := NewDialogs[string](4, true)
	lim := RegLimits{SessionsPer: 1}
	// A registration whose one session the dialogs count.
	if no, _ := ds.Admit(parse("REGISTER sip:r SIP/2.0\r\nVia: SIP/2.0/UDP c;branch=z9hG4bKr\r\nTo: <sip:a@r>\r\nCall-ID: r\r\nContent-Length: 0\r\n\r\n"), lim, 0); no != nil {
		t.Fatal("registration refused")
	}
	for _, st := range []struct {
		name   string
		msg    string
		at     int64 // seconds
		begin  string
		member string // the member Member gives for call1 after the step, "" none
	}{
		{"an INVITE begins the dialog", req("INVITE", "call1", ""), 0, "m1", "m1"},
		{"a provisional answer changes nothing", resp(180, "INVITE", "call1"), 1, "", "m1"},
		{"a retransmission sent elsewhere moves it", req("INVITE", "call1", ""), 2, "m2", "m2"},
		{"a 200 establishes it", resp(200, "INVITE", "call1"), 3, "", "m2"},
		{"past the establishment timer it stays, once established", req("INFO", "call1", ";tag=t"), 50, "", "m2"},
		{"a BYE's answer ends it", resp(200, "BYE", "call1"), 51, "", ""},
		{"a new INVITE with the session freed", req("INVITE", "call1", ""), 52, "m3", "m3"},
		{"a failure before a 2xx ends it", resp(486, "INVITE", "call1"), 53, "", ""},
		{"again", req("INVITE", "call1", ""), 54, "m4", "m4"},
		{"not established within its timer: forgotten", req("INFO", "call1", ";tag=t"), 65, "", ""},
		{"a request inside a dialog begins none", req("INVITE", "call1", ";tag=t"), 66, "m5", ""},
	} {
		m := parse(st.msg)
		if st.begin != "" {
			no, aor := ds.Admit(m, lim, st.at*sec)
			if no != nil {
				t.Fatalf("%s: refused: the registration's session was not freed", st.name)
			}
			ds.Begin(m, st.begin, aor, establish, st.at*sec)
		} else {
			ds.Seen(m, session, st.at*sec)
		}
		got, ok := ds.Member(parse(req("INFO", "call1", ";tag=t")), st.at*sec)
		if !ok {
			got = ""
		}
		if got != st.member {
			t.Fatalf("%s: member %q, want %q", st.name, got, st.member)
		}
	}
	// The session timer runs from each message once established.
	m := parse(req("INVITE", "call2", ""))
	ds.Begin(m, "m6", "", establish, 0)
	ds.Seen(parse(resp(200, "INVITE", "call2")), session, 1*sec)
	ds.Seen(parse(req("INFO", "call2", ";tag=t")), session, 90*sec)
	if _, ok := ds.Member(m, 150*sec); !ok {
		t.Fatal("the session timer did not restart at the last message")
	}
	if _, ok := ds.Member(m, 191*sec); ok {
		t.Fatal("the session timer did not end the dialog")
	}
	// Past the limit about half is forgotten.
	for i := range 10 {
		ds.Begin(parse(req("INVITE", fmt.Sprint("bulk", i), "")), "m", "", 0, 0)
	}
	if n := len(ds.m); n > 4 {
		t.Fatalf("%d dialogs kept, limit 4", n)
	}
}
