// Package ipfixtest is an IPFIX and NetFlow v9 collector for tests,
// written from RFC 7011 and RFC 3954 apart from the exporter it checks:
// it listens on UDP, TCP or TLS, learns templates per session and decodes
// data records to their raw fields.
package ipfixtest

import (
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"
)

// TField is a template field as a collector reads it.
type TField struct {
	ID         uint16
	Enterprise uint32
	Length     uint16
}

// Msg is one decoded message.
type Msg struct {
	Version   uint16
	Length    uint16 // IPFIX: the header's length; v9: its count
	Export    uint32
	Seq       uint32
	Domain    uint32
	Uptime    uint32              // v5's sysUptime
	Templates map[uint16][]TField // template records in this message
	Withdrawn []uint16
	Records   []Rec
}

// Rec is one data record: its template and its raw fields.
type Rec struct {
	Template uint16
	Fields   [][]byte
}

// Collector holds the templates it learned and the messages it decoded.
type Collector struct {
	mu    sync.Mutex
	tmpls map[uint16][]TField
	msgs  []Msg
	errs  []error
}

// New makes a collector that knows no templates.
func New() *Collector { return &Collector{tmpls: map[uint16][]TField{}} }

// Records counts the data records in msgs.
func Records(msgs []Msg) int {
	n := 0
	for _, m := range msgs {
		n += len(m.Records)
	}
	return n
}

// Feed decodes one message (or several, back to back on TCP) and keeps
// them; it returns what followed the last complete message.
func (c *Collector) Feed(b []byte) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(b) >= 4 {
		v := binary.BigEndian.Uint16(b)
		var n int
		switch v {
		case 10:
			n = int(binary.BigEndian.Uint16(b[2:]))
		case 9:
			n = len(b) // one datagram per packet
		case 5:
			if len(b) < 24 {
				return b
			}
			n = 24 + 48*int(binary.BigEndian.Uint16(b[2:]))
			if n > len(b) {
				return b
			}
			c.msgs = append(c.msgs, decodeV5(b[:n]))
			b = b[n:]
			continue
		default:
			c.errs = append(c.errs, fmt.Errorf("version %d", v))
			return nil
		}
		if n < 16 || n > len(b) {
			return b
		}
		m, err := c.decode(b[:n])
		if err != nil {
			c.errs = append(c.errs, err)
		} else {
			c.msgs = append(c.msgs, m)
		}
		b = b[n:]
	}
	return b
}

// V5Fields are the lengths of NetFlow v5's record fields, in order:
// srcaddr, dstaddr, nexthop, input, output, dPkts, dOctets, First, Last,
// srcport, dstport, pad1, tcp_flags, prot, tos, src_as, dst_as,
// src_mask, dst_mask, pad2. A v5 message's records are decoded to these
// fields (template 0); its Length is the record count, Uptime the
// header's sysUptime.
var V5Fields = []int{4, 4, 4, 2, 2, 4, 4, 4, 4, 2, 2, 1, 1, 1, 1, 2, 2, 1, 1, 2}

// decodeV5 reads a NetFlow v5 message: a 24-octet header, 48-octet
// records.
func decodeV5(b []byte) Msg {
	m := Msg{Version: 5, Length: binary.BigEndian.Uint16(b[2:]), Uptime: binary.BigEndian.Uint32(b[4:]),
		Export: binary.BigEndian.Uint32(b[8:]), Seq: binary.BigEndian.Uint32(b[16:]), Domain: uint32(b[21])}
	for r := b[24:]; len(r) >= 48; r = r[48:] {
		rec := Rec{}
		off := 0
		for _, n := range V5Fields {
			rec.Fields = append(rec.Fields, r[off:off+n])
			off += n
		}
		m.Records = append(m.Records, rec)
	}
	return m
}

func (c *Collector) decode(b []byte) (Msg, error) {
	m := Msg{Version: binary.BigEndian.Uint16(b), Length: binary.BigEndian.Uint16(b[2:]), Templates: map[uint16][]TField{}}
	var sets []byte
	tmplSet := uint16(2)
	if m.Version == 9 {
		if len(b) < 20 {
			return m, fmt.Errorf("short v9 header")
		}
		m.Export = binary.BigEndian.Uint32(b[8:])
		m.Seq = binary.BigEndian.Uint32(b[12:])
		m.Domain = binary.BigEndian.Uint32(b[16:])
		sets = b[20:]
		tmplSet = 0
	} else {
		m.Export = binary.BigEndian.Uint32(b[4:])
		m.Seq = binary.BigEndian.Uint32(b[8:])
		m.Domain = binary.BigEndian.Uint32(b[12:])
		sets = b[16:]
	}
	for len(sets) > 0 {
		if len(sets) < 4 {
			return m, fmt.Errorf("short set header")
		}
		id, n := binary.BigEndian.Uint16(sets), int(binary.BigEndian.Uint16(sets[2:]))
		if n < 4 || n > len(sets) {
			return m, fmt.Errorf("set %d: length %d of %d", id, n, len(sets))
		}
		if m.Version == 9 && n%4 != 0 {
			return m, fmt.Errorf("v9 flowset %d: length %d not padded to 4", id, n)
		}
		body := sets[4:n]
		sets = sets[n:]
		switch {
		case id == tmplSet:
			for len(body) >= 4 {
				tid, cnt := binary.BigEndian.Uint16(body), int(binary.BigEndian.Uint16(body[2:]))
				body = body[4:]
				if tid == 0 && cnt == 0 { // v9 padding
					break
				}
				if cnt == 0 {
					m.Withdrawn = append(m.Withdrawn, tid)
					delete(c.tmpls, tid)
					continue
				}
				var fs []TField
				for range cnt {
					if len(body) < 4 {
						return m, fmt.Errorf("template %d: short field", tid)
					}
					f := TField{ID: binary.BigEndian.Uint16(body), Length: binary.BigEndian.Uint16(body[2:])}
					body = body[4:]
					if m.Version == 10 && f.ID&0x8000 != 0 {
						f.ID &^= 0x8000
						f.Enterprise = binary.BigEndian.Uint32(body)
						body = body[4:]
					}
					fs = append(fs, f)
				}
				m.Templates[tid] = fs
				c.tmpls[tid] = fs
			}
		case id >= 256:
			fs, ok := c.tmpls[id]
			if !ok {
				return m, fmt.Errorf("data set %d before its template", id)
			}
			for len(body) > 0 {
				r := Rec{Template: id}
				start := len(body)
				for _, f := range fs {
					n := int(f.Length)
					if f.Length == 0xFFFF {
						if len(body) < 1 {
							return m, fmt.Errorf("short variable length")
						}
						n, body = int(body[0]), body[1:]
						if n == 255 {
							n, body = int(binary.BigEndian.Uint16(body)), body[2:]
						}
					}
					if len(body) < n {
						if len(body) == start && m.Version == 9 {
							break
						}
						return m, fmt.Errorf("record of %d: field %d needs %d, %d left", id, f.ID, n, len(body))
					}
					r.Fields = append(r.Fields, body[:n])
					body = body[n:]
				}
				if len(r.Fields) == len(fs) {
					m.Records = append(m.Records, r)
				}
				if m.Version == 9 && len(body) < 4 && allZero(body) {
					break
				}
			}
		default:
			return m, fmt.Errorf("set id %d", id)
		}
	}
	return m, nil
}

func allZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

// Snapshot is what the collector decoded so far, and its errors.
func (c *Collector) Snapshot() ([]Msg, []error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Msg(nil), c.msgs...), append([]error(nil), c.errs...)
}

// UDP listens on addr and decodes each datagram.
func UDP(t *testing.T, addr string) (*Collector, netip.AddrPort) {
	t.Helper()
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	c := New()
	go func() {
		buf := make([]byte, 65536)
		for {
			n, _, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			c.Feed(append([]byte(nil), buf[:n]...))
		}
	}()
	return c, netip.MustParseAddrPort(pc.LocalAddr().String())
}

// TCP accepts connections on addr and decodes their streams;
// each connection is a new session, with no templates.
func TCP(t *testing.T, addr string) (*Collector, netip.AddrPort, func() int) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return stream(t, ln)
}

// TLS is TCP with each connection a TLS session of cfg (the collector's
// certificate); a connection whose handshake fails is not counted.
func TLS(t *testing.T, addr string, cfg *tls.Config) (*Collector, netip.AddrPort, func() int) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return stream(t, &tlsListener{ln, cfg})
}

// tlsListener hands out connections whose TLS handshake is done.
type tlsListener struct {
	net.Listener
	cfg *tls.Config
}

func (l *tlsListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		tc := tls.Server(c, l.cfg)
		tc.SetDeadline(time.Now().Add(10 * time.Second))
		if err := tc.Handshake(); err != nil {
			c.Close()
			continue
		}
		tc.SetDeadline(time.Time{})
		return tc, nil
	}
}

func stream(t *testing.T, ln net.Listener) (*Collector, netip.AddrPort, func() int) {
	t.Cleanup(func() { ln.Close() })
	c := New()
	var mu sync.Mutex
	conns := 0
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns++
			mu.Unlock()
			t.Cleanup(func() { conn.Close() })
			go func() {
				var pend []byte
				buf := make([]byte, 65536)
				for {
					n, err := conn.Read(buf)
					if n > 0 {
						pend = c.Feed(append(pend, buf[:n]...))
						pend = append([]byte(nil), pend...)
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return c, netip.MustParseAddrPort(ln.Addr().String()), func() int { mu.Lock(); defer mu.Unlock(); return conns }
}

// WaitFor polls cond for up to 10 seconds.
func WaitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}
