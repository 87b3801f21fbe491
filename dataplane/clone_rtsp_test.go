package dataplane

import (
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/rtsp"
)

// TestCloneRTSP: an rtsp virtual's clientside clone (a rule's, in
// CLIENT_ACCEPTED, and a clientside clone pool) gets the control
// connection's bytes as the client sent them, though the gateway parses
// and sends its messages again; serverside gets them as the member got
// them (the rule's header). A clone in RTSP_REQUEST starts at the
// request it runs over: the DESCRIBE and the OPTIONS after it, not the
// one before.
func TestCloneRTSP(t *testing.T) {
	for i, tc := range []struct {
		name, rule string
		pools      bool
		cloned     bool
	}{
		{"rule", "when CLIENT_ACCEPTED { clone pool /Common/ids_cs\n serverside { clone pool /Common/ids_ss } }", false, true},
		{"clone pools", "", true, true},
		{"request", "when RTSP_REQUEST { if { [RTSP::method] eq \"DESCRIBE\" } { clone pool /Common/ids_cs } }", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := "127.197.7" + string(rune('1'+i)) + "."
			m := rtspMember(t, base+"10:8554", "member-1")
			cs := startCloneCollector(t, base+"3:9001")
			ss := startCloneCollector(t, base+"4:9001")
			p, _ := newPlane(t)
			cfg := basic(base+"1:8554", m.Addr())
			v := cfg.Virtuals["/Common/vs"]
			v.RTSP = &rtsp.Options{Profile: "/Common/rtsp", Idle: 30 * time.Second}
			v.TranslateAddress, v.TranslatePort = true, true
			rule := tc.rule + "\nwhen RTSP_REQUEST { RTSP::header insert X-Tap yes }"
			v.Rules, _ = compileRules(t, rule)
			addClonePool(cfg, "/Common/ids_cs", base+"3:9001")
			addClonePool(cfg, "/Common/ids_ss", base+"4:9001")
			if tc.pools {
				v.Clone = []ClonePool{{Pool: "/Common/ids_cs"}, {Pool: "/Common/ids_ss", Server: true}}
			}
			mustApply(t, p, cfg)

			rc := rtspDial(t, "127.0.0.1", base+"1:8554")
			for _, method := range []string{"OPTIONS", "DESCRIBE", "OPTIONS"} {
				if r := rc.do(method, "rtsp://"+base+"1:8554/media", "User-Agent: cloned-client"); r.Status != 200 {
					t.Fatalf("%s: %d", method, r.Status)
				}
			}
			rc.c.Close()
			if !tc.cloned {
				got := cs.wait(t, 1)
				if len(got) != 1 || !strings.HasPrefix(got[0], "DESCRIBE rtsp://"+base+"1:8554/media RTSP/1.0\r\n") ||
					strings.Count(got[0], "OPTIONS") != 1 || strings.Contains(got[0], "X-Tap") {
					t.Errorf("RTSP_REQUEST's clone = %q, want the DESCRIBE as the client sent it and the OPTIONS after it, not the one before", got)
				}
				eventually(t, "clone counters", func() bool {
					st, _ := p.Virtual("/Common/vs")
					return st.Clone != nil && st.Clone.Conns == 1 && st.Clone.Dropped == 0
				})
				return
			}
			got := cs.wait(t, 1)
			if len(got) != 1 || !strings.HasPrefix(got[0], "OPTIONS rtsp://"+base+"1:8554/media RTSP/1.0\r\nCSeq: 1\r\n") ||
				!strings.Contains(got[0], "DESCRIBE rtsp://") || strings.Contains(got[0], "X-Tap") {
				t.Errorf("clientside copy = %q, want both requests as the client sent them", got)
			}
			got = ss.wait(t, 1)
			if len(got) != 1 || strings.Count(got[0], "X-Tap: yes\r\n") != 3 {
				t.Errorf("serverside copy = %q, want the three requests as the member got them", got)
			}
			eventually(t, "clone counters", func() bool {
				st, _ := p.Virtual("/Common/vs")
				return st.Clone != nil && st.Clone.Conns == 2 && st.Clone.Dropped == 0
			})
		})
	}
}
