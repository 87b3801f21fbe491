//go:build linux

package l4

import "github.com/openltm/openltm/dataplane/internal/sockopt"

// proxy-buffer-low on the loops: a direction whose destination took only
// part of a write stops reading its source (it is pending) until the
// destination's writability edge. Linux gives that edge when the unsent
// bytes are below half of TCP_NOTSENT_LOWAT (proxy-buffer-high), so
// while the direction waits the destination's TCP_NOTSENT_LOWAT is twice
// proxy-buffer-low (the edge then comes below low), and high again once
// the destination is written again (flush). Without proxy-buffer-low:
// one nil test when a destination fills, one flag test when it is
// written again.

// dstSide is the tcp profile side of a direction's destination: the
// members' going up, the client's going down.
func (lf *loopFlow) dstSide(up bool) *sockopt.Side {
	sn := lf.flow.snap
	if sn == nil {
		return nil
	}
	if up {
		return sn.Cfg.ServerTCP
	}
	return sn.Cfg.ClientTCP
}

// bufferFull notes that direction up's destination is full: its wake-up
// moves to proxy-buffer-low, when the side has one.
func (lf *loopFlow) bufferFull(up bool) {
	s := lf.dstSide(up)
	if s == nil || s.NotSentLow == 0 {
		return
	}
	d := lf.dir(up)
	if d.lowered {
		return
	}
	d.lowered = true
	_, dst := lf.ends(up)
	s.LowWait(dst)
}

// bufferResumed gives direction up's destination its proxy-buffer-high
// back when it is written again.
func (lf *loopFlow) bufferResumed(up bool) {
	d := lf.dir(up)
	d.lowered = false
	if s := lf.dstSide(up); s != nil {
		_, dst := lf.ends(up)
		s.LowResume(dst)
	}
}
