package tlsprof

import "sync/atomic"

// HandshakeGate bounds the handshakes of a profile in progress at once
// (max-active-handshakes), so that a flood of clients that open
// handshakes and never finish them cannot take every handshake's CPU
// and memory: past the bound a new connection is reset at once. A nil
// gate lets every handshake in.
type HandshakeGate struct {
	max     int64
	active  atomic.Int64
	refused atomic.Uint64
}

// NewHandshakeGate is a gate of max handshakes; max <= 0 is no bound
// (indefinite), a nil gate.
func NewHandshakeGate(max int) *HandshakeGate {
	if max <= 0 {
		return nil
	}
	return &HandshakeGate{max: int64(max)}
}

// Enter takes a place for a handshake; false when the profile has max
// handshakes in progress already (the connection is then reset).
func (g *HandshakeGate) Enter() bool {
	if g == nil {
		return true
	}
	if g.active.Add(1) > g.max {
		g.active.Add(-1)
		g.refused.Add(1)
		return false
	}
	return true
}

// Leave gives back the place Enter took, when the handshake ended
// (done, failed or timed out).
func (g *HandshakeGate) Leave() {
	if g != nil {
		g.active.Add(-1)
	}
}

// Active is how many handshakes are in progress, for shows and tests.
func (g *HandshakeGate) Active() int64 {
	if g == nil {
		return 0
	}
	return g.active.Load()
}

// Refused is how many connections the gate reset, for shows and tests.
func (g *HandshakeGate) Refused() uint64 {
	if g == nil {
		return 0
	}
	return g.refused.Load()
}
