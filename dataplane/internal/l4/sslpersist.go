package l4

import (
	"bytes"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/persist"
	"github.com/openltm/openltm/dataplane/tlsprof"
	"github.com/openltm/openltm/rules"
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

// terminatesTLS reports whether the virtual ends the client's TLS (a
// client-ssl profile): ssl persistence then keys on the session's name
// (tlsprof.SessionTag, tls.go), not on hellos read in passing.
func terminatesTLS(cfg *config.Virtual) bool { return cfg.TLS != nil && cfg.TLS.Client != nil }

// firstKey reads the persistence key of the method the virtual's default
// profile uses from c's first bytes (an SSL hello's session ID, an RDP
// client's routing cookie, a hash profile's payload key), and returns what it read, to be passed on;
// have is what another virtual server read of them (handoff.go).
func firstKey(cfg *config.Virtual, c *net.TCPConn, have []byte) (head, key []byte, err error) {
	switch cfg.Persist.Method {
	case config.PersistMSRDP:
		return readFirst(c, have, rdpCookie)
	case config.PersistHash: // the hash profile's payload key (Persistence.Peeks)
		pl := cfg.Persist.Payload
		return readFirstN(c, have, pl.Limit, func(b []byte) ([]byte, bool) { return pl.Key(b, true) })
	}
	return readFirst(c, have, tlsprof.HelloSessionID)
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
	return readFirst(c, nil, tlsprof.HelloSessionID)
}

// readClientHello reads c until the ClientHello its bytes start with is
// whole (h nil: they start with none, or it is longer than helloLimit),
// or helloWait passes; head is everything read, to be passed on, and id
// the hello's session ID. have is what another virtual server read of
// c's bytes (handoff.go). err is set only when c ended or failed with
// nothing read.
func readClientHello(c *net.TCPConn, have []byte) (head, id []byte, h *tls.ClientHelloInfo, err error) {
	head, _, err = readFirst(c, have, func(b []byte) ([]byte, bool) {
		var done bool
		h, done = tlsprof.ParseClientHello(b)
		return nil, done
	})
	if h != nil {
		id, _ = tlsprof.HelloSessionID(head)
	}
	return head, id, h, err
}

// readFirst reads c until find, given everything read so far, says the
// key is known (nil: none there), or helloWait passes (no key). have
// holds bytes of c already read (handed over, handoff.go), looked at
// first.
func readFirst(c *net.TCPConn, have []byte, find func([]byte) (key []byte, done bool)) (head, key []byte, err error) {
	return readFirstN(c, have, helloLimit, find)
}

// readFirstN is readFirst reading at most limit bytes (more when have
// holds more).
func readFirstN(c *net.TCPConn, have []byte, limit int, find func([]byte) (key []byte, done bool)) (head, key []byte, err error) {
	if len(have) > 0 {
		if got, done := find(have); done || len(have) >= limit {
			return have, got, nil
		}
	}
	c.SetReadDeadline(time.Now().Add(helloWait))
	defer c.SetReadDeadline(time.Time{})
	buf := make([]byte, limit)
	n := copy(buf, have)
	for n < len(buf) {
		k, rerr := c.Read(buf[n:])
		n += k
		if got, done := find(buf[:n]); done {
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

// serverHello reads the member's first bytes, passes them to the client
// and records the session ID of the ServerHello they start with for the
// member (ssl persistence); false when either side failed. The
// member-to-client direction runs it before it copies, while the
// client's bytes flow on: a member answers only once it has the whole
// hello, which may be longer than what was read before balancing.
func (pr *proxied) serverHello(sc *serverConn) bool {
	back, id, err := readHello(sc.conn)
	if err != nil {
		return errors.Is(err, io.EOF) // the copy passes the member's FIN on
	}
	if len(back) > 0 {
		if pr.rs != nil { // rules write to the client too (flushTo)
			pr.rs.wmu[0].Lock()
			defer pr.rs.wmu[0].Unlock()
		}
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

// rdpCookie reads the routing cookie of the RDP Connection Request at the
// start of b (a TPKT header, an X.224 Connection Request, then
// `Cookie: mstshash=USER` or a session broker's `Cookie: msts=TOKEN`,
// ended by CRLF): USER or `msts=TOKEN` [M: BIG-IP's has-session-dir,
// which sends a TOKEN to the server it names, is not acted on], nil when
// the request carries none or b starts with no such request.
func rdpCookie(b []byte) (key []byte, done bool) {
	const tpkt, x224 = 4, 7 // header lengths: TPKT, X.224 Connection Request
	if len(b) < tpkt+2 {
		return nil, false
	}
	if b[0] != 3 || b[tpkt+1]&0xf0 != 0xe0 { // TPKT version 3, CR TPDU
		return nil, true
	}
	n := int(b[2])<<8 | int(b[3])
	if n < tpkt+x224 {
		return nil, true
	}
	if len(b) < n {
		return nil, false
	}
	rest := b[tpkt+x224 : n]
	line, _, ok := bytes.Cut(rest, []byte("\r\n"))
	if !ok {
		return nil, true
	}
	v, ok := bytes.CutPrefix(line, []byte("Cookie: "))
	if !ok {
		return nil, true
	}
	if user, ok := bytes.CutPrefix(v, []byte("mstshash=")); ok {
		v = user
	}
	if len(v) == 0 {
		return nil, true
	}
	return append([]byte(nil), v...), true
}

// passHead passes the client's first bytes, read for a persistence key,
// to the member; false when that failed (the caller resets).
func (pr *proxied) passHead(sc *serverConn, head []byte) bool {
	if pr.clone != nil {
		pr.clone.Both(head) // clone.go
	}
	if _, err := sc.conn.Write(head); err != nil {
		return false
	}
	pr.count(len(head), true, sc)
	return true
}

// sessionDirTarget is the member a Terminal Services session directory
// sent the client to, from its routing token (`Cookie: msts=IP.PORT.0000`,
// the address as a little-endian number and the port byte-swapped, as
// Microsoft's brokers write it), when the virtual's msrdp persistence has
// has-session-dir yes. The member must be in the pool; a token naming
// another address is balanced as usual [M].
func sessionDirTarget(cfg *config.Virtual, key []byte) (netip.AddrPort, bool) {
	if cfg.Persist == nil || cfg.Persist.Method != config.PersistMSRDP || !cfg.Persist.SessionDir {
		return netip.AddrPort{}, false
	}
	return routingToken(key)
}

// routingToken decodes "msts=3640205228.15629.0000".
func routingToken(key []byte) (netip.AddrPort, bool) {
	v, ok := bytes.CutPrefix(key, []byte("msts="))
	if !ok {
		return netip.AddrPort{}, false
	}
	parts := bytes.Split(v, []byte("."))
	if len(parts) < 2 {
		return netip.AddrPort{}, false
	}
	ip, err1 := strconv.ParseUint(string(parts[0]), 10, 32)
	port, err2 := strconv.ParseUint(string(parts[1]), 10, 16)
	if err1 != nil || err2 != nil {
		return netip.AddrPort{}, false
	}
	addr := netip.AddrFrom4([4]byte{byte(ip), byte(ip >> 8), byte(ip >> 16), byte(ip >> 24)})
	p := uint16(port)<<8 | uint16(port)>>8
	return netip.AddrPortFrom(addr, p), p != 0
}

// peekFirst is serve's read of the client's first bytes for a flow with
// rules, after CLIENT_ACCEPTED: the persistence key, and, when the
// virtual persists on SSL and its rules handle CLIENTSSL_CLIENTHELLO, the
// whole ClientHello, over which that event runs before any member is
// chosen (TLS passed through and routed by its SNI, as BIG-IP does with
// an ssl persistence profile and no client-ssl). Without a hello (other
// bytes, a longer one, none in time) the event does not run. The bytes
// wait in pr.head for the member (passFirst), or go to the rule when it
// collects the client's data. False: the flow is over.
func (pr *proxied) peekFirst() bool {
	cfg := pr.snap.Cfg
	head := pr.head // handed over by another virtual server (handoff.go)
	pr.head = nil
	peeks := cfg.Persist.Peeks() && (cfg.TLS == nil || cfg.TLS.Client == nil)
	if !peeks && len(head) == 0 {
		return true
	}
	var (
		h   *tls.ClientHelloInfo
		err error
	)
	switch p := irules.Program(pr.rules); {
	case !peeks: // the handed bytes go on as the client's
	case sslPersists(cfg) && p != nil && p.Handles(rules.ClientSSLClientHello):
		head, pr.firstKey, h, err = readClientHello(pr.client, head)
	default:
		head, pr.firstKey, err = firstKey(cfg, pr.client, head)
	}
	if err != nil {
		pr.end(false)
		return false
	}
	if h != nil {
		pr.hello = h
		ok := pr.runSSLEvent(rules.ClientSSLClientHello)
		pr.hello = nil
		if !ok {
			return false
		}
		if pr.rs.toVirtual != nil { // `virtual NAME`: handed on with the hello
			pr.countRead(len(head), true, nil)
			pr.head = head
			return true
		}
	}
	if len(head) == 0 {
		return true
	}
	rs := pr.rs
	rs.mu.Lock()
	st := &rs.side[rules.ClientSide]
	collected := st.collecting
	if collected {
		rs.collectBytes(st, true, head)
	}
	rs.mu.Unlock()
	if collected {
		pr.countRead(len(head), true, nil)
	} else {
		pr.head = head
	}
	return true
}

// passFirst passes the client's first bytes that peekFirst kept to the
// flow's new server side, and with ssl persistence has the member's
// answer read for its session (serverHello) unless a rule collects that
// answer. False: the flow is over (the caller resets).
func (pr *proxied) passFirst(sc *serverConn) bool {
	cfg := pr.snap.Cfg
	if len(pr.head) == 0 && (!cfg.Persist.Peeks() || (cfg.TLS != nil && cfg.TLS.Client != nil)) {
		return true
	}
	rs := pr.rs
	rs.mu.Lock()
	sc.helloBack = sslPersists(cfg) && !terminatesTLS(cfg) && !rs.side[rules.ServerSide].collecting
	rs.mu.Unlock()
	head := pr.head
	pr.head = nil
	return len(head) == 0 || pr.passHead(sc, head)
}
