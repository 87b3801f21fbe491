package daemon

import (
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

// The tcp and fastl4 profiles' close handling (loose-close,
// reset-on-client-fin, the close, FIN-WAIT, zero-window and client
// timers: dataplane.TCPClose) and their linger, retransmission and MD5
// settings (on each side's dataplane.TCPSide). As with the other socket
// settings, one left at its schema default (in the profile and its
// parents) keeps the sockets' own behaviour, so a default profile costs
// nothing per connection.

// md5MaxKey is Linux's TCP_MD5SIG_MAXKEYLEN.
const md5MaxKey = 80

// closeSide adds a tcp profile's time-wait-timeout 0, max-retrans and
// minimum-rto, and md5-signature to s.
func (t *translator) closeSide(p *objects.Object, s *dataplane.TCPSide) {
	if t.explicit(p, "time-wait-timeout") && atoi(t.eff(p, "time-wait-timeout")) == 0 {
		s.NoLinger = true
	}
	if t.explicit(p, "max-retrans") || t.explicit(p, "minimum-rto") {
		s.UserTimeout = dataplane.UserTimeout(atoi(t.eff(p, "max-retrans")), time.Duration(atoi(t.eff(p, "minimum-rto")))*time.Millisecond)
	}
	if t.eff(p, "md5-signature") == "enabled" {
		s.MD5Key = t.eff(p, "md5-signature-passphrase")
	}
	if t.explicit(p, "proxy-buffer-high") {
		s.NotSentLowat = atoi(t.eff(p, "proxy-buffer-high"))
	}
	if t.explicit(p, "proxy-buffer-low") {
		s.NotSentLow = atoi(t.eff(p, "proxy-buffer-low"))
	}
	if t.eff(p, "rate-pace") == "enabled" && t.explicit(p, "rate-pace-max-rate") {
		s.PacingRate = atoi(t.eff(p, "rate-pace-max-rate"))
	}
	s.MPTCP = t.eff(p, "mptcp") == "enabled"
}

// closeCheck refuses md5-signature enabled without a pass phrase Linux
// takes (1 to 80 bytes), and a proxy-buffer-low above proxy-buffer-high.
func (t *translator) closeCheck(o *objects.Object, ps ...*objects.Object) bool {
	for _, p := range ps {
		if p == nil {
			continue
		}
		if lo, hi := atoi(t.eff(p, "proxy-buffer-low")), atoi(t.eff(p, "proxy-buffer-high")); lo > hi {
			return t.refuse("The virtual server (%s) uses ltm profile tcp %s: proxy-buffer-low (%d) may not be above proxy-buffer-high (%d).", o.Name, p.Name, lo, hi)
		}
		if t.eff(p, "md5-signature") != "enabled" {
			continue
		}
		if k := t.eff(p, "md5-signature-passphrase"); k == "" || k == "none" || len(k) > md5MaxKey {
			return t.refuse("The virtual server (%s) uses ltm profile tcp %s: md5-signature enabled needs an md5-signature-passphrase of 1 to %d characters.", o.Name, p.Name, md5MaxKey)
		}
	}
	return true
}

// tcpClose is the close handling of tcp profiles client and server (the
// shorter of two timers set on both).
func (t *translator) tcpClose(client, server *objects.Object) *dataplane.TCPClose {
	var c dataplane.TCPClose
	for _, p := range []*objects.Object{client, server} {
		if p == nil {
			continue
		}
		c.AfterFIN = shorter(c.AfterFIN, t.timer(p, "close-wait-timeout", time.Second))
		c.FinWait = shorter(c.FinWait, t.timer(p, "fin-wait-timeout", time.Second))
		c.ZeroWindow = shorter(c.ZeroWindow, t.timer(p, "zero-window-timeout", time.Millisecond))
	}
	if c == (dataplane.TCPClose{}) {
		return nil
	}
	return &c
}

// fastL4Close is a fastl4 profile's close handling, and its
// tcp-time-wait-timeout 0 on both sides.
func (t *translator) fastL4Close(p *objects.Object, v *dataplane.Virtual) {
	var c dataplane.TCPClose
	c.Loose = t.eff(p, "loose-close") == "enabled"
	c.ResetOnClientFIN = t.eff(p, "reset-on-client-fin") == "enabled"
	c.AfterFIN = t.timer(p, "tcp-close-timeout", time.Second)
	c.ClientTimeout = t.timer(p, "client-timeout", time.Second)
	if c != (dataplane.TCPClose{}) {
		v.TCPClose = &c
	}
	if t.explicit(p, "tcp-time-wait-timeout") && atoi(t.eff(p, "tcp-time-wait-timeout")) == 0 {
		for _, s := range []**dataplane.TCPSide{&v.ClientTCP, &v.ServerTCP} {
			if *s == nil {
				*s = &dataplane.TCPSide{}
			}
			(*s).NoLinger = true
		}
	}
}

// timer is a profile's timer name in unit when set (explicit, not 0);
// 0 otherwise.
func (t *translator) timer(p *objects.Object, name string, unit time.Duration) time.Duration {
	if !t.explicit(p, name) {
		return 0
	}
	n := atoi(t.eff(p, name))
	if n <= 0 {
		return 0
	}
	return time.Duration(min(int64(n), maxSeconds)) * unit
}

// shorter is the shorter of two timers, 0 being none.
func shorter(a, b time.Duration) time.Duration {
	if a == 0 || b != 0 && b < a {
		return b
	}
	return a
}
