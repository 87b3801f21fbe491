package dataplane

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/fix"
	"github.com/openltm/openltm/dataplane/fix/fixtest"
)

// TestFIXResponseEventsAndLogs: with response-parsing, FIX_MESSAGE runs
// over the member's messages on the server side (IP::remote_addr is the
// member's), and drop there closes the session; the profile's
// message-log-publisher gets every message both ways and its
// report-log-publisher the malformed ones, with what was done.
func TestFIXResponseEventsAndLogs(t *testing.T) {
	t.Parallel()
	a := startAcceptor(t, "127.180.1.10:9878", "member-a")
	p, _ := newPlane(t)
	cfg := basic("127.180.1.1:9878", a.Addr())
	delete(cfg.Virtuals, "/Common/vs")
	sink := &pubSink{}
	lg := &fix.Log{Message: "/Common/msgs", Report: "/Common/reports", Send: sink.send}
	fixVirtual(t, cfg, "/Common/resp", "127.180.1.1:9878", "/Common/pool", fix.Options{FullLogon: true, Response: true, Log: lg}, `when FIX_MESSAGE {
		if {[FIX::tag get 35] eq "8"} {
			if {[IP::remote_addr] ne "127.180.1.10"} { reject }
			if {[FIX::tag get 55] eq "HALT"} { drop }
		}
	}`)
	// Without response-parsing the member's messages run no events.
	fixVirtual(t, cfg, "/Common/noresp", "127.180.1.2:9878", "/Common/pool", fix.Options{FullLogon: true}, `when FIX_MESSAGE {
		if {[FIX::tag get 35] eq "8"} { reject }
	}`)
	mustApply(t, p, cfg)

	fixMsg := func(sym string) []byte { // an order for sym
		return fixtest.Build("FIX.4.4", "35=D", "34=2", "49=BANZAI", "52=20250101-10:00:01.000", "56=EXEC", "11=ORD1", "21=1",
			"38=100", "40=2", "44=101.25", "54=1", "55="+sym, "60=20250101-10:00:01.000")
	}

	t.Run("events over the member's messages", func(t *testing.T) {
		c := fixDial(t, "127.180.1.1:9878")
		c.Send(fixLogon("FIX.4.4", "BANZAI"))
		recvHas(t, c, "35=A", "49=member-a")
		c.Send(fixMsg("IBM"))
		recvHas(t, c, "35=8", "55=IBM") // serverside: the member's address
		c.Send(fixMsg("HALT"))
		if m, err := c.Recv(10 * time.Second); err == nil || !(errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)) {
			t.Fatalf("after the member's HALT report: %q %v, want the session closed", m, err)
		}
		c = fixDial(t, "127.180.1.2:9878")
		c.Send(fixLogon("FIX.4.4", "BANZAI"), fixMsg("IBM"))
		recvHas(t, c, "35=A")
		recvHas(t, c, "35=8", "55=IBM")
	})

	t.Run("message and report logs", func(t *testing.T) {
		bad := fixOrder("FIX.4.4", "BANZAI")
		bad[len(bad)-2]++
		c := fixDial(t, "127.180.1.1:9878")
		c.Send(fixLogon("FIX.4.4", "LOGGED"))
		recvHas(t, c, "35=A")
		c.Send(bad, fixHeartbeat("FIX.4.4", "LOGGED"))
		eventually(t, "the logs", func() bool {
			s := sink.text()
			return strings.Contains(s, "malformed") && strings.Contains(s, "|35=0|34=3|49=LOGGED|")
		})
		s := sink.text()
		for _, w := range []string{
			"/Common/msgs <134>fix /Common/fix /Common/resp: client 127.0.0.1:",
			" -> server none: 8=FIX.4.4|9=",
			"|35=A|34=1|49=LOGGED|",
			" -> server 127.180.1.10:9878: 8=FIX.4.4|",
			"/Common/msgs <134>fix /Common/fix /Common/resp: server 127.180.1.10:9878 -> client 127.0.0.1:",
			"|35=A|49=member-a|56=LOGGED|",
			"/Common/reports <131>fix /Common/fix /Common/resp: client 127.0.0.1:",
			": malformed message (CheckSum ",
			"): dropped",
		} {
			if !strings.Contains(s, w) {
				t.Fatalf("missing %q in:\n%s", w, s)
			}
		}
		if strings.Contains(s, "noresp") {
			t.Fatalf("a virtual without publishers logged:\n%s", s)
		}
	})
}
