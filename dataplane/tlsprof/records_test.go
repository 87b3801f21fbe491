package tlsprof

import (
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"slices"
	"strings"
	"testing"
)

// recordSizes is the reading end of a TLS client's socket, noting the
// length of every record the server sent.
type recordSizes struct {
	net.Conn
	buf  []byte
	lens []int
}

func (r *recordSizes) Read(b []byte) (int, error) {
	n, err := r.Conn.Read(b)
	r.buf = append(r.buf, b[:n]...)
	for len(r.buf) >= 5 {
		l := int(r.buf[3])<<8 | int(r.buf[4])
		if len(r.buf) < 5+l {
			break
		}
		r.lens = append(r.lens, l)
		r.buf = r.buf[5+l:]
	}
	return n, err
}

// TestRecordSizing: a client-ssl profile sends full-size records (16 KB)
// unless allow-dynamic-record-sizing is enabled, when a connection starts
// with records of about one TCP segment.
func TestRecordSizing(t *testing.T) {
	p := newPKI(t)
	ck := p.chain(t, "records", "ecdsa", "records.example")
	for _, dynamic := range []bool{false, true} {
		prof, err := (&ClientSSL{Name: "/Common/r", CertKeyChain: []CertKeyChain{ck}, DynamicRecordSizing: dynamic}).Build()
		if err != nil {
			t.Fatal(err)
		}
		c1, c2 := net.Pipe()
		go func() {
			srv := tls.Server(c1, prof.Config)
			srv.Write(bytes.Repeat([]byte("x"), 64<<10))
			srv.Close()
		}()
		rs := &recordSizes{Conn: c2}
		cli := tls.Client(rs, &tls.Config{InsecureSkipVerify: true})
		if _, err := io.Copy(io.Discard, cli); err != nil {
			t.Fatal(err)
		}
		largest := slices.Max(rs.lens)
		if full := largest > 16000; full == dynamic {
			t.Errorf("allow-dynamic-record-sizing %v: largest record %d bytes of %d records", dynamic, largest, len(rs.lens))
		}
	}
}

// TestMaximumRecordSizeRange: BIG-IP's range, 256 to 16384; the default
// (and 0, unset) limits nothing.
func TestMaximumRecordSizeRange(t *testing.T) {
	p := newPKI(t)
	ck := p.chain(t, "mrs", "ecdsa", "mrs.example")
	for _, tc := range []struct {
		size, limit int
		bad         bool
	}{
		{0, 0, false}, {16384, 0, false}, {256, 256, false}, {4096, 4096, false},
		{255, 0, true}, {16385, 0, true}, {-1, 0, true},
	} {
		b, err := (&ClientSSL{Name: "/Common/mrs", CertKeyChain: []CertKeyChain{ck}, MaxRecordSize: tc.size}).Build()
		if tc.bad {
			if err == nil || !strings.Contains(err.Error(), "maximum-record-size") {
				t.Errorf("maximum-record-size %d: got %v, want a range error", tc.size, err)
			}
			continue
		}
		if err != nil || b.RecordLimit() != tc.limit {
			t.Errorf("maximum-record-size %d: limit %d, %v; want %d", tc.size, b.RecordLimit(), err, tc.limit)
		}
	}
}
