package mblb

import (
	"errors"
	"io"
)

// The read loops of the sessions that route each message by what it
// says (SIP, IIOP): the client's and a member's, and the dial of a
// member connection of their own, written once.

// readClient reads s's client through st until it ends, handing each
// framed message to each (false: the session ended). tooLarge tells an
// oversize message from other framing errors (a protocol's own framer
// has its own error for it); label names the protocol in the log ("" or
// "IIOP "). eof runs before the close when the client ends its side
// cleanly (nil: nothing to do).
func (s *ClientConn) readClient(st *stream, label string, tooLarge func(error) bool, each func([]byte) bool, eof func()) error {
	for {
		k, err := st.read(s.c)
		if k > 0 {
			s.active()
			s.bytesIn.Add(uint64(k))
			if s.meter != nil {
				s.meter.Received(k)
			}
			for {
				b, ferr := st.next()
				if ferr != nil {
					if tooLarge(ferr) {
						s.tooLarge()
						return ferr
					}
					s.e.logf("mblb: %sclient %s: %v, reset", label, s.client, ferr)
					s.Close(true)
					return ferr
				}
				if b == nil {
					break
				}
				if !each(b) {
					return errClosed
				}
			}
		}
		if err != nil {
			if errors.Is(err, ErrTooLarge) {
				s.tooLarge()
				return err
			}
			if errors.Is(err, io.EOF) {
				if eof != nil {
					eof()
				}
				s.Close(false)
				return nil
			}
			if s.isClosed() {
				return nil
			}
			s.Close(true)
			return err
		}
	}
}

// isTooLarge is readClient's tooLarge for the engine's own framers.
func isTooLarge(err error) bool { return errors.Is(err, ErrTooLarge) }

// readMember reads what sc's member sends through st until the
// connection ends, handing each framed message to each; a framing
// error or one each returns fails the connection (logged as label's).
func (sc *serverConn) readMember(st *stream, label string, each func([]byte) error) {
	for {
		k, err := st.read(sc.conn)
		if k > 0 {
			sc.received(k)
			for {
				b, ferr := st.next()
				if ferr == nil && b != nil {
					ferr = each(b)
				}
				if ferr != nil {
					sc.e.logf("mblb: %s from %s %s: %v", label, sc.leg.Member.Name, sc.leg.Remote, ferr)
					sc.fail(ferr)
					err = ferr
					break
				}
				if b == nil {
					break
				}
			}
		}
		if err != nil {
			sc.failed(err)
			return
		}
	}
}

// dialRouted opens s's own connection to mem, unless another dial made
// one meanwhile (that one is returned), and runs read, the session's
// member reader, on a goroutine of its own until the connection ends.
// errClosed when the client closed meanwhile.
func (s *ClientConn) dialRouted(mem Member, read func(*serverConn)) (*serverConn, error) {
	s.dialMu.Lock()
	defer s.dialMu.Unlock()
	if sc := s.ownConn(mem.ID); sc != nil {
		return sc, nil
	}
	return s.dialOwnWith(mem, nil, func(sc *serverConn) { go read(sc) })
}
