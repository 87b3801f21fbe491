package udp

import "github.com/openltm/openltm/dataplane/internal/sockopt"

// The udp profile's socket settings: the client side (ip-tos-to-client,
// ip-ttl-*, ip-df-mode, send-buffer-size, no-checksum) on the
// listener's sockets, which send every answer to the clients, and the
// server side on each member socket (flow.go's openLeg). Unset, a
// member socket costs a nil test.

// SetOpts sets the listener's sockets as its virtual's client side says,
// when it changed since the last commit; the caller holds the plane's
// lock.
func (l *Listener) SetOpts(s *sockopt.Side) {
	var v sockopt.Side
	if s != nil {
		v = *s
	}
	if l.optsSet && v == l.opts {
		return
	}
	l.opts, l.optsSet = v, true
	buf := socketBuffer
	if v.SendBuffer > 0 {
		buf = v.SendBuffer
	}
	for _, x := range l.all() {
		x.conn.SetWriteBuffer(buf)
		x.rc.Control(func(fd uintptr) { sockopt.ApplyDatagram(int(fd), s) })
	}
}

// allowEmpty reports whether the listener's virtual forwards datagrams
// without a payload (allow-no-payload); read only for such a datagram.
func (l *Listener) allowEmpty() bool {
	vs := l.virtual()
	return vs != nil && vs.Snap.Load().Cfg.AllowNoPayload
}
