package l4

import (
	"bufio"
	"errors"
	"net"
	"os"
	"sync"
	"time"
)

// offload is what the STARTTLS offloads share (stlsFlow for SMTP, IMAP
// and POP3, ldapFlow for LDAP): each reads the client's and the member's
// messages itself, answers the client's STARTTLS in the virtual's name
// and then runs the client's TLS, so each writes whole messages to both
// sides and passes the bytes it need not read (literals, long messages)
// through a buffer of its own.
type offload struct {
	pr *proxied
	sc *serverConn

	mu sync.Mutex // the protocol's session
	// wmu orders the writes to the client: a member's answer and the
	// virtual's own answers, each whole, in the order the requests came;
	// the handshake holds it.
	wmu sync.Mutex

	// buf and mbuf are the client's and the member's pumps' buffers for
	// bytes passed unread (made at the first).
	buf, mbuf []byte
}

// offloadBuf is the size of an offload's pass buffers and readers.
const offloadBuf = 16 << 10

// startTLS runs the client's TLS handshake after the answer to its
// STARTTLS. The bytes br holds were sent before the answer (pipelined
// plaintext, CVE-2011-0411): they are counted and dropped, not
// decrypted or passed on. started tells the protocol's session, under mu.
func (x *offload) startTLS(br *bufio.Reader, started func()) bool {
	pr := x.pr
	if n := br.Buffered(); n > 0 {
		pr.count(n, true, x.sc)
		br.Discard(n)
	}
	x.wmu.Lock()
	ok := pr.handshakeClient(true) // tls.go
	x.wmu.Unlock()
	if !ok || pr.ctls == nil {
		pr.lost(x.sc)
		return false
	}
	x.mu.Lock()
	started()
	x.mu.Unlock()
	return true
}

// toMember writes b to the member (through server-ssl's TLS when it
// runs) within the flow's idle timeout; false when the flow was ended
// for it.
func (x *offload) toMember(b []byte) bool {
	pr := x.pr
	if idle := pr.IdleTimeout(); idle > 0 {
		x.sc.conn.SetWriteDeadline(time.Now().Add(idle))
	}
	if _, err := x.sc.netConn().Write(b); err != nil {
		pr.lost(x.sc)
		return false
	}
	if pr.clone != nil {
		pr.clone.Server(b) // clone.go: as the member got it
	}
	return true
}

// toClient writes b to the client (through TLS once it runs); wmu is
// held.
func (x *offload) toClient(b []byte) bool {
	if len(b) == 0 {
		return true
	}
	pr := x.pr
	if idle := pr.IdleTimeout(); idle > 0 {
		pr.client.SetWriteDeadline(time.Now().Add(idle))
	}
	if _, err := pr.clientWrite(b); err != nil {
		pr.lost(x.sc)
		return false
	}
	return true
}

// pass moves the n bytes that follow unread (an IMAP literal, a BDAT
// chunk, the rest of a long LDAP message) from src, read through br, to
// to (nil: they are dropped); up says whose they are, for the counters.
func (x *offload) pass(br *bufio.Reader, src *net.TCPConn, n int64, up bool, to func([]byte) bool) bool {
	pr := x.pr
	bp := &x.buf // each pump has its own
	if !up {
		bp = &x.mbuf
	}
	if *bp == nil {
		*bp = make([]byte, offloadBuf)
	}
	buf := *bp
	for n > 0 {
		pr.armIdle(src, pr.LastActive())
		k, err := br.Read(buf[:min(int64(len(buf)), n)])
		if k > 0 {
			n -= int64(k)
			pr.count(k, up, x.sc)
			if up && pr.clone != nil {
				pr.clone.Client(buf[:k])
			}
			if to != nil && !to(buf[:k]) {
				return false
			}
		}
		switch {
		case err == nil:
		case errors.Is(err, os.ErrDeadlineExceeded) && pr.stillActive(src):
		default:
			pr.lost(x.sc)
			return false
		}
	}
	return true
}
