package l4

import (
	"encoding/hex"
	"errors"
	"net"
	"os"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/persist"
	"github.com/openltm/openltm/dataplane/tlsprof"
)

// SSL persistence (`ltm persistence ssl`) on a virtual that passes TLS
// through: the flow runs on goroutines (state.VirtualSnap.Plain is false),
// reads the client's first bytes before choosing a member, and persists
// on the session ID of the ClientHello (a client resuming a session
// returns to the member that made it); once connected it reads the
// member's first bytes and records the ServerHello's session ID, the
// session the member runs, for the client's next connection. Bytes that
// are no TLS hello carry no ID: the flow is balanced and nothing is
// recorded. A TLS 1.3 session resumes by ticket, not by ID (the IDs are
// random per connection), so it does not persist, as on BIG-IP.

// helloWait bounds each wait for a hello: a client silent for this long
// is balanced without one, and a member silent for this long is not
// recorded [M: BIG-IP's wait is not documented].
const helloWait = 10 * time.Second

// helloLimit bounds what is read to find a hello's session ID (it is in
// the first 76 bytes; more arrives in the same read).
const helloLimit = 16 << 10

// sslPersists reports whether the virtual's default persistence is SSL.
func sslPersists(cfg *config.Virtual) bool {
	return cfg.Persist != nil && cfg.Persist.Method == config.PersistSSL
}

// sslKey is the table's key for a session ID.
func sslKey(id []byte) persist.Key {
	return persist.StringKey(persist.SSLSessionID, hex.EncodeToString(id))
}

// readHello reads c until the session ID of the hello its bytes start
// with is known (nil: none), or helloWait passes; head is everything
// read, to be passed on. err is set only when c ended or failed with
// nothing read.
func readHello(c *net.TCPConn) (head, id []byte, err error) {
	c.SetReadDeadline(time.Now().Add(helloWait))
	defer c.SetReadDeadline(time.Time{})
	buf := make([]byte, helloLimit)
	n := 0
	for n < len(buf) {
		k, rerr := c.Read(buf[n:])
		n += k
		if got, done := tlsprof.HelloSessionID(buf[:n]); done {
			return buf[:n], got, nil
		}
		if rerr != nil {
			if n == 0 && !errors.Is(rerr, os.ErrDeadlineExceeded) {
				return nil, nil, rerr
			}
			return buf[:n], nil, nil
		}
	}
	return buf[:n], nil, nil
}

// sslConnected passes the client's first bytes to the member, and the
// member's first bytes to the client, recording the ServerHello's session
// ID for the member; false when either side failed (the caller resets).
func (pr *proxied) sslConnected(sc *serverConn, head []byte) bool {
	if len(head) > 0 {
		if _, err := sc.conn.Write(head); err != nil {
			return false
		}
		pr.count(len(head), true, sc)
	}
	back, id, err := readHello(sc.conn)
	if err != nil {
		return false
	}
	if len(back) > 0 {
		if _, err := pr.client.Write(back); err != nil {
			return false
		}
		pr.count(len(back), false, sc)
	}
	if id != nil && sc.member != nil {
		prof := pr.snap.Cfg.Persist
		d := persistDecision{key: sslKey(id), prof: prof, timeout: prof.Timeout}
		pr.persistSave(&d, sc.pool, sc.member)
	}
	return true
}
