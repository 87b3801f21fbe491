package logpub

import (
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/hsl"
	"github.com/openltm/openltm/dataplane/syslog"
)

// TestFormats is a table of messages through a splunk and an arcsight
// destination, each forwarded to a remote-high-speed-log.
func TestFormats(t *testing.T) {
	at := time.Date(2026, 12, 5, 15, 4, 5, 0, time.UTC)
	ms := "1796483045000"
	for _, c := range []struct {
		name, msg, splunk, cef string
	}{
		{"free text with PRI", "<190>GET /cart from 10.0.0.1\n",
			`<190>date_time="Dec 05 2026 15:04:05",hostname="lb1.example",severity="info",msg="GET /cart from 10.0.0.1"` + "\n",
			`<190>CEF:0|F5|Local Traffic Manager|17.1.0|0|Log Message|3|rt=` + ms + ` dvchost=lb1.example msg=GET /cart from 10.0.0.1` + "\n"},
		{"pairs", `client=10.0.0.1 uri="/a b" status=200`,
			`date_time="Dec 05 2026 15:04:05",hostname="lb1.example",severity="info",client="10.0.0.1",uri="/a b",status="200"`,
			`CEF:0|F5|Local Traffic Manager|17.1.0|0|Log Message|3|rt=` + ms + ` dvchost=lb1.example client=10.0.0.1 uri=/a b status=200`},
		{"message id and escapes", `<132>01260013:4: SSL Handshake failed: a="b" c=d\e`,
			`<132>date_time="Dec 05 2026 15:04:05",hostname="lb1.example",severity="warning",message_id="01260013",msg="SSL Handshake failed: a=\"b\" c=d\\e"`,
			`<132>CEF:0|F5|Local Traffic Manager|17.1.0|01260013|Log Message|5|rt=` + ms + ` dvchost=lb1.example msg=SSL Handshake failed: a\="b" c\=d\\e`},
		{"quoted escapes", `<187>k="say \"hi\""`,
			`<187>date_time="Dec 05 2026 15:04:05",hostname="lb1.example",severity="err",k="say \"hi\""`,
			`<187>CEF:0|F5|Local Traffic Manager|17.1.0|0|Log Message|7|rt=` + ms + ` dvchost=lb1.example k=say "hi"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			raw := &Destination{Name: "/Common/raw", Remote: &Remote{Proto: "UDP", Pool: "/Common/siem", Dist: hsl.Balanced}}
			pub := &Publisher{Name: "/Common/p", Dests: []*Destination{
				{Name: "/Common/splunk", Format: Splunk, Forward: raw},
				{Name: "/Common/arcsight", Format: ArcSight, Forward: raw},
			}}
			set := NewSet([]*Publisher{pub})
			set.Now = func() time.Time { return at }
			set.Hostname, set.Version = "lb1.example", "17.1.0"
			hub := &fakeHub{}
			if !set.Send(hub, pub, []byte(c.msg)) {
				t.Fatal("not sent")
			}
			want := []string{"UDP:/Common/siem:balanced " + c.splunk, "UDP:/Common/siem:balanced " + c.cef}
			if len(hub.sent) != 2 || hub.sent[0] != want[0] || hub.sent[1] != want[1] {
				t.Fatalf("sent:\n%q\nwant:\n%q", hub.sent, want)
			}
		})
	}
}

// TestFormatForwardsThroughSyslog: a splunk destination forwarding to a
// remote-syslog gets the syslog header before the pairs, with the
// message's severity; one forwarding nowhere takes nothing.
func TestFormatForwardsThroughSyslog(t *testing.T) {
	at := time.Date(2026, 12, 5, 15, 4, 5, 0, time.UTC)
	rs := &Destination{Name: "/Common/rs", Remote: &Remote{Proto: "TCP", Pool: "/Common/siem"},
		Syslog: &syslog.Header{Format: syslog.RFC3164, Facility: 16, Severity: 6, Hostname: "lb1", App: "tmm"}}
	pub := &Publisher{Name: "/Common/p", Dests: []*Destination{{Name: "/Common/splunk", Format: Splunk, Forward: rs}, {Name: "/Common/dangling", Format: ArcSight}}}
	set := NewSet([]*Publisher{pub})
	set.Now = func() time.Time { return at }
	set.Hostname = "lb1"
	hub := &fakeHub{}
	set.Send(hub, pub, []byte("<131>k=v"))
	want := `TCP:/Common/siem:balanced <131>Dec  5 15:04:05 lb1 tmm: date_time="Dec 05 2026 15:04:05",hostname="lb1",severity="err",k="v"`
	if len(hub.sent) != 1 || hub.sent[0] != want {
		t.Fatalf("sent %q\nwant %q", hub.sent, want)
	}
}
