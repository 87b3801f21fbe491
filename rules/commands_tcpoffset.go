package rules

import "github.com/openltm/openltm/rules/tcl"

// TCP::offset: the position in the event side's byte stream where the
// data the rule holds (TCP::collect, TCP::payload) starts, which is the
// number of bytes that side received before it; with nothing held, every
// byte the side has received so far. [M: F5's pages word it as the
// stream position of the collected data and as the bytes held through
// TCP::collect; openltm answers the position, which is 0 for the first
// collected bytes of a connection and grows as the rule releases them.
// A TCP::payload replace in the same event moves it by the size change.]

// StreamOffsetter is a connection that counts the bytes each side
// received (TCP::offset): the counters its statistics keep.
type StreamOffsetter interface {
	// StreamOffset is the position in side s's stream of the first byte
	// held for the rule; an error when the event has no such side (no
	// server connection yet).
	StreamOffset(s Side) (int64, error)
}

func registerTCPOffset(t *tcl.Commands) {
	t.Register("TCP::offset", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 1 {
			return tcl.Empty, tcl.WrongArgs("TCP::offset")
		}
		s, c, err := sess(in, "TCP::offset")
		if err != nil {
			return tcl.Empty, err
		}
		so, ok := c.(StreamOffsetter)
		if !ok || c.Protocol() != 6 {
			return tcl.Empty, tcl.Errorf("TCP::offset: the connection has no TCP byte stream")
		}
		n, err := so.StreamOffset(s.side)
		if err != nil {
			return tcl.Empty, tcl.Errorf("TCP::offset: %v", err)
		}
		return tcl.Int(n), nil
	})
}
