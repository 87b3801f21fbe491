//go:build !linux

package mblb

import (
	"net"
	"net/netip"
)

// drainedConn cannot tell here: a full read is taken to have left
// bytes waiting.
func drainedConn(net.Conn) bool { return false }

// Without event loops every session runs on goroutines; these stand-ins
// keep the shared code compiling and are never reached (lp stays nil).

type evl struct{}

type sessLoop struct{}

func (ls *sessLoop) loop() *evl                   { return nil }
func (ls *sessLoop) postFlush()                   {}
func (ls *sessLoop) socket() (int, bool)          { return 0, false }
func (ls *sessLoop) postResumeUpload(*ClientConn) {}
func (ls *sessLoop) write(*ClientConn)            {}
func (ls *sessLoop) deferWrite() bool             { return false }
func (ls *sessLoop) close(*ClientConn, bool)      {}
func (ls *sessLoop) post(func())                  {}
func (s *ClientConn) migrateTunnel(*serverConn)   {}
func (s *ClientConn) resumeHTTP()                 {}
func (s *ClientConn) loopFlushed() bool           { return false }
func (e *Engine) dialLoop(*ClientConn, Member, *ClientConn, *evl) (*serverConn, error) {
	return nil, errClosed
}
func (e *Engine) attachFD(*ClientConn, Member, *ClientConn, *memberStats, *evl, int, bool, netip.AddrPort) (*serverConn, error) {
	return nil, errClosed
}

type connLoop struct{}

func (cl *connLoop) loop() *evl                { return nil }
func (cl *connLoop) postFlush(*serverConn)     {}
func (cl *connLoop) postEnd(*serverConn)       {}
func (cl *connLoop) postResume(*serverConn)    {}
func (cl *connLoop) flushLocked(*serverConn)   {}
func (cl *connLoop) closeFD(*serverConn, bool) {}
func (cl *connLoop) deferFlush(*serverConn)    {}

// Loopable is false: there are no event loops here.
func (e *Engine) Loopable() bool { return false }

// Off Linux no window is read (no TCP_INFO here): the zero-window timer
// never fires.
func zeroWindowFD(int) bool          { return false }
func connZeroWindow(c net.Conn) bool { return false }
func connFD(c net.Conn) int          { return -1 }

func connInfo(net.Conn) (closeWait, zw, open bool) { return false, false, true }
func connUnsent(net.Conn) int                      { return 0 }
