package l4

import (
	"errors"
	"io"
	"net"
	"os"

	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/streamfilter"
	"github.com/openltm/openltm/rules"
)

// A stream profile on a plain TCP virtual rewrites the bytes of both
// directions as they pass (BIG-IP's stream filter without an http
// profile: the whole TCP payload, an SMTP banner or a line protocol's
// host names). Such flows are served on goroutines (state.Plain is false
// for them) by copyFiltered instead of copyLoop: every read goes through
// the direction's filter, never splice, and a filter's held bytes go out
// before the half-close that ends its direction. Bytes a rule collects
// (TCP::collect) reach the rule unfiltered, and what it releases or
// sends is not filtered either.

// streamDir is one direction's filter.
type streamDir struct {
	f *streamfilter.Filter
	// expr is the expression f was made with: a rule's new
	// STREAM::expression starts a new filter.
	expr string
	// out is the filter's output, reused; match the copy of a
	// STREAM_MATCHED replacement.
	out, match []byte
}

// filterFor returns the filter the next bytes of sd's direction pass
// through (nil: none) after appending to dst what a filter that ends
// now still held: the rules turned the filter off, or gave another
// expression.
func (pr *proxied) filterFor(sd *streamDir, dst []byte) (*streamfilter.Filter, []byte) {
	so := pr.snap.Cfg.Stream
	st := &rules.StreamState{Expr: so.Expr.String(), On: so.Expr != nil} // the profile's
	matched := false
	if rs := pr.rs; rs != nil {
		rs.mu.Lock()
		if rs.sess != nil && rs.sess.Stream() != nil {
			cur := *rs.sess.Stream()
			st = &cur
		}
		prog := irules.Program(pr.rules)
		matched = prog != nil && prog.Handles(rules.StreamMatched)
		rs.mu.Unlock()
	}
	if sd.f != nil && st.On && sd.expr == st.Expr {
		return sd.f, dst
	}
	if sd.f != nil {
		dst, sd.f = sd.f.Close(dst), nil
	}
	var onMatch func(match, repl []byte) []byte
	if matched {
		onMatch = func(match, repl []byte) []byte {
			sd.match = pr.streamMatched(sd.match[:0], match, repl)
			return sd.match
		}
	}
	sd.f, sd.expr = st.Filter(onMatch), st.Expr
	return sd.f, dst
}

// streamMatched runs STREAM_MATCHED over one match and appends what
// takes its place to dst (copied under the rules' lock: the other
// direction may run the event next). A rule that fails, rejects or
// drops ends the flow.
func (pr *proxied) streamMatched(dst, match, repl []byte) []byte {
	rs := pr.rs
	rs.mu.Lock()
	if rs.sess == nil || rs.done {
		rs.mu.Unlock()
		return append(dst, repl...)
	}
	dst, err := rs.sess.RunStreamMatched(dst, match, repl)
	v := rs.verdict
	rs.verdict = irules.GoOn
	rs.mu.Unlock()
	switch {
	case err != nil || v == irules.Reject:
		// (Not at once: the copy loop is in the middle of a write.)
		go pr.end(true)
	case v != irules.GoOn:
		go pr.closeGraceful()
	}
	return dst
}

// copyFiltered is copyLoop for a flow with a stream profile: bytes from
// src go through the direction's filter to dst until either side ends.
// As copyLoop, it returns true when a rule turned collection on (st) and
// the bytes just read went to the rule.
func (pr *proxied) copyFiltered(src, dst *net.TCPConn, up bool, sc *serverConn, st *sideState) bool {
	sd := &pr.streams[0]
	if !up {
		sd = &pr.streams[1]
	}
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	buf := *bp
	pr.armIdle(src, pr.LastActive())
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if up && pr.rs != nil && pr.rs.srvOn.Load() {
				pr.joinSrvClones() // clone.go: SERVER_DATA's
			}
			if up && pr.clone != nil {
				pr.clone.Client(buf[:n]) // clone.go; serverside: writeOut
			}
			if st != nil && st.on.Load() {
				// What the filter held goes first.
				var held []byte
				if sd.f != nil {
					held, sd.f = sd.f.Close(nil), nil
				}
				if !pr.writeOut(dst, held, up, sc) {
					return false
				}
				pr.countRead(n, up, sc)
				rs := pr.rs
				rs.mu.Lock()
				rs.collectBytes(st, up, buf[:n])
				rs.mu.Unlock()
				return true
			}
			pr.countRead(n, up, sc)
			if up {
				if ip := pr.ingress.Load(); ip != nil {
					ip.Wait(n) // bwc.Ingress
				}
			}
			f, out := pr.filterFor(sd, sd.out[:0])
			if f != nil {
				out = f.Write(out, buf[:n])
			} else {
				out = append(out, buf[:n]...)
			}
			sd.out = out
			if !pr.writeOut(dst, out, up, sc) {
				return false
			}
			pr.armIdle(src, pr.LastActive())
		}
		switch {
		case err == nil:
		case errors.Is(err, os.ErrDeadlineExceeded) && pr.stillActive(src):
		case errors.Is(err, io.EOF):
			if sd.f != nil {
				held := sd.f.Close(sd.out[:0])
				sd.f = nil
				if !pr.writeOut(dst, held, up, sc) {
					return false
				}
			}
			if c := pr.snap.Cfg.TCPClose; c != nil && pr.closeOnFIN(c, up) { // tcpclose.go
				return false
			}
			if !pr.gone(sc) && pr.passFIN() {
				dst.CloseWrite()
			}
			return false
		default:
			pr.lost(sc)
			return false
		}
	}
}

// writeOut writes what a filter gave to dst and counts it on the side it
// leaves by (the bytes read were counted as they came: the two differ by
// what the filter changed). False: the flow is lost.
func (pr *proxied) writeOut(dst *net.TCPConn, b []byte, up bool, sc *serverConn) bool {
	if len(b) == 0 {
		return true
	}
	if bk := pr.bwc.Load(); bk != nil {
		bk.WaitDir(len(b), up) // bwc.go
	}
	var n int
	var err error
	if low := pr.lowSide(up); low != nil { // tcpopts.go
		n, err = lowWrite(dst, low, b)
	} else {
		n, err = dst.Write(b)
	}
	if up {
		pr.cloneSent(b[:n]) // clone.go
		sc.out(n, state.Packets(n))
	} else {
		pr.clientOut(n, state.Packets(n))
	}
	if err != nil {
		pr.lost(sc)
		return false
	}
	return true
}
