package ipfix

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"
)

// A collector decoder written from RFC 7011 and RFC 3954 alone, apart
// from the encoder, for field-level checks of what the exporter sent.

// decField is a template field as a collector reads it.
type decField struct {
	id         uint16
	enterprise uint32
	length     uint16
}

// decMsg is one decoded message.
type decMsg struct {
	version   uint16
	length    uint16 // IPFIX: the header's length; v9: its count
	export    uint32
	seq       uint32
	domain    uint32
	templates map[uint16][]decField // template records in this message
	withdrawn []uint16
	records   []decRec
}

// decRec is one data record: its template and its raw fields.
type decRec struct {
	template uint16
	fields   [][]byte
}

// collector holds the templates a collector learned, per session.
type collector struct {
	mu        sync.Mutex
	templates map[uint16][]decField
	msgs      []decMsg
	errs      []error
}

func newCollector() *collector { return &collector{templates: map[uint16][]decField{}} }

// feed decodes one message (or several, back to back on TCP) and keeps
// them; it returns what followed the last complete message.
func (c *collector) feed(b []byte) []byte {
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

func (c *collector) decode(b []byte) (decMsg, error) {
	m := decMsg{version: binary.BigEndian.Uint16(b), length: binary.BigEndian.Uint16(b[2:]), templates: map[uint16][]decField{}}
	var sets []byte
	tmplSet := uint16(2)
	if m.version == 9 {
		if len(b) < 20 {
			return m, fmt.Errorf("short v9 header")
		}
		m.export = binary.BigEndian.Uint32(b[8:])
		m.seq = binary.BigEndian.Uint32(b[12:])
		m.domain = binary.BigEndian.Uint32(b[16:])
		sets = b[20:]
		tmplSet = 0
	} else {
		m.export = binary.BigEndian.Uint32(b[4:])
		m.seq = binary.BigEndian.Uint32(b[8:])
		m.domain = binary.BigEndian.Uint32(b[12:])
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
		if m.version == 9 && n%4 != 0 {
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
					m.withdrawn = append(m.withdrawn, tid)
					delete(c.templates, tid)
					continue
				}
				var fs []decField
				for range cnt {
					if len(body) < 4 {
						return m, fmt.Errorf("template %d: short field", tid)
					}
					f := decField{id: binary.BigEndian.Uint16(body), length: binary.BigEndian.Uint16(body[2:])}
					body = body[4:]
					if m.version == 10 && f.id&0x8000 != 0 {
						f.id &^= 0x8000
						f.enterprise = binary.BigEndian.Uint32(body)
						body = body[4:]
					}
					fs = append(fs, f)
				}
				m.templates[tid] = fs
				c.templates[tid] = fs
			}
		case id >= 256:
			fs, ok := c.templates[id]
			if !ok {
				return m, fmt.Errorf("data set %d before its template", id)
			}
			for len(body) > 0 {
				r := decRec{template: id}
				start := len(body)
				for _, f := range fs {
					n := int(f.length)
					if f.length == 0xFFFF {
						if len(body) < 1 {
							return m, fmt.Errorf("short variable length")
						}
						n, body = int(body[0]), body[1:]
						if n == 255 {
							n, body = int(binary.BigEndian.Uint16(body)), body[2:]
						}
					}
					if len(body) < n {
						if len(body) == start && m.version == 9 {
							break
						}
						return m, fmt.Errorf("record of %d: field %d needs %d, %d left", id, f.id, n, len(body))
					}
					r.fields = append(r.fields, body[:n])
					body = body[n:]
				}
				if len(r.fields) == len(fs) {
					m.records = append(m.records, r)
				}
				if m.version == 9 && len(body) < 4 && allZero(body) {
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

func (c *collector) snapshot() ([]decMsg, []error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]decMsg(nil), c.msgs...), append([]error(nil), c.errs...)
}

// udpCollector listens on addr and decodes each datagram.
func udpCollector(t *testing.T, addr string) (*collector, netip.AddrPort) {
	t.Helper()
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	c := newCollector()
	go func() {
		buf := make([]byte, 65536)
		for {
			n, _, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			c.feed(append([]byte(nil), buf[:n]...))
		}
	}()
	return c, netip.MustParseAddrPort(pc.LocalAddr().String())
}

// tcpCollector accepts connections on addr and decodes their streams;
// each connection is a new session, with no templates.
func tcpCollector(t *testing.T, addr string) (*collector, netip.AddrPort, func() int) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	c := newCollector()
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
						pend = c.feed(append(pend, buf[:n]...))
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

// waitFor polls cond for up to 10 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
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
