//go:build !linux

package mblb

// Without event loops every session runs on goroutines; these stand-ins
// keep the shared code compiling and are never reached (lp stays nil).

type evl struct{}

type sessLoop struct{}

func (ls *sessLoop) loop() *evl           { return nil }
func (ls *sessLoop) postFlush()           {}
func (ls *sessLoop) write(*Session)       {}
func (ls *sessLoop) close(*Session, bool) {}
func (s *Session) loopFlushed() bool      { return false }
func (e *Engine) dialLoop(*Session, Member, *Session, *evl) (*serverConn, error) {
	return nil, errClosed
}

type connLoop struct{}

func (cl *connLoop) loop() *evl                { return nil }
func (cl *connLoop) postFlush(*serverConn)     {}
func (cl *connLoop) postEnd(*serverConn)       {}
func (cl *connLoop) flushLocked(*serverConn)   {}
func (cl *connLoop) closeFD(*serverConn, bool) {}
func (cl *connLoop) deferFlush(*serverConn)    {}

// Loopable is false: there are no event loops here.
func (e *Engine) Loopable() bool { return false }
