package tlsprof

import "io"

// MinRecordSize and MaxRecordSize bound client-ssl's maximum-record-size
// as BIG-IP does; MaxRecordSize, the protocol's own bound, is its
// default and leaves records as crypto/tls makes them.
const (
	MinRecordSize = 256
	MaxRecordSize = 16384
)

// RecordLimit is the client-ssl profile's maximum-record-size, 0 when it
// is the default: a virtual's flows chunk what they write to the client
// by it (WriteRecords).
func (b *Built) RecordLimit() int {
	if b == nil {
		return 0
	}
	return b.maxRecord
}

// WriteRecords writes p to w, a TLS connection, in writes of at most max
// bytes: crypto/tls seals each write into records of its own, so none
// carries more plaintext than max (maximum-record-size), which crypto/tls
// cannot be told. max 0 is one plain write, the cost of a comparison.
func WriteRecords(w io.Writer, p []byte, max int) (int, error) {
	if max <= 0 || len(p) <= max {
		return w.Write(p)
	}
	n := 0
	for n < len(p) {
		k, err := w.Write(p[n:min(n+max, len(p))])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
