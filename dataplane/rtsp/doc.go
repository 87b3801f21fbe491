// Package rtsp is the rtsp profile's application layer gateway: BIG-IP
// reads the RTSP (RFC 2326) control connection of a TCP virtual server
// and, because the addresses and ports of the RTP and RTCP data
// channels travel inside SETUP's Transport header, opens those channels
// through its own addresses so that a client behind the virtual gets the
// member's media.
//
// The package is split by job: message.go frames and edits the control
// connection's messages (and its interleaved $ frames), transport.go
// reads and rewrites the Transport header, channel.go holds the UDP
// relays of one SETUP, session.go the table of a virtual's sessions
// (which outlive the control connection that made them), and server.go
// a small RTSP server for tests and tools. The L4 engine
// (dataplane/internal/l4/rtsp.go) owns the control connection.
package rtsp
