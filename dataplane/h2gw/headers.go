package h2gw

import (
	"errors"

	"golang.org/x/net/http/httpguts"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// headerBlock is a HEADERS frame with its CONTINUATION frames, decoded.
// Why not the framer's ReadMetaHeaders: it allocates the frame, a
// closure and the field list for every request; this one reuses them,
// with the same checks (RFC 9113 section 8.2: field names and values,
// pseudo fields first and known, the list within the size advertised).
type headerBlock struct {
	id        uint32
	end       bool  // END_STREAM
	selfDep   bool  // PRIORITY on the stream itself
	weight    uint8 // the priority weight HEADERS carried (HTTP2::stream priority)
	fields    []hpack.HeaderField
	size      uint32 // of fields, as HPACK counts
	truncated bool   // past maxHeaderListSize: fields is incomplete
	invalid   bool
	regular   bool // a regular field came: no more pseudo ones
}

var errHeaderBlock = errors.New("h2gw: malformed header block")

// readHeaders decodes f's block into g.hb, reading the CONTINUATION
// frames that follow it. A decoding error is the connection's
// (COMPRESSION_ERROR); a malformed field the stream's. The reader's
// alone, outside mu: it may wait for the client.
func (g *conn) readHeaders(f *http2.HeadersFrame) error {
	hb := &g.hb
	*hb = headerBlock{id: f.StreamID, end: f.StreamEnded(), selfDep: f.HasPriority() && f.Priority.StreamDep == f.StreamID, fields: hb.fields[:0], weight: defaultWeight}
	if f.HasPriority() {
		hb.weight = f.Priority.Weight
	}
	frag, done := f.HeaderBlockFragment(), f.HeadersEnded()
	total := 0
	for {
		if total += len(frag); total > 2*maxHeaderListSize {
			return http2.ConnectionError(http2.ErrCodeProtocol) // far past what was advertised
		}
		if _, err := g.dec.Write(frag); err != nil {
			return http2.ConnectionError(http2.ErrCodeCompression)
		}
		if done {
			break
		}
		next, err := g.fr.ReadFrame()
		if err != nil {
			return err
		}
		c := next.(*http2.ContinuationFrame) // the framer checks the order
		frag, done = c.HeaderBlockFragment(), c.HeadersEnded()
	}
	if err := g.dec.Close(); err != nil {
		return http2.ConnectionError(http2.ErrCodeCompression)
	}
	if hb.invalid || !pseudosValid(hb.fields) {
		return http2.StreamError{StreamID: hb.id, Code: http2.ErrCodeProtocol, Cause: errHeaderBlock}
	}
	return nil
}

// emit takes a decoded field (the decoder's emit function).
func (g *conn) emit(f hpack.HeaderField) {
	hb := &g.hb
	if hb.invalid || hb.truncated {
		return
	}
	if !httpguts.ValidHeaderFieldValue(f.Value) {
		hb.invalid = true
		return
	}
	if f.IsPseudo() {
		if hb.regular {
			hb.invalid = true
			return
		}
	} else {
		hb.regular = true
		if !wireName(f.Name) {
			hb.invalid = true
			return
		}
	}
	if hb.size += f.Size(); hb.size > maxHeaderListSize {
		hb.truncated = true
		return
	}
	hb.fields = append(hb.fields, f)
}

// wireName reports whether name is a field name as HTTP/2 sends it: a
// token in lower case.
func wireName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !httpguts.IsTokenRune(rune(c)) || 'A' <= c && c <= 'Z' {
			return false
		}
	}
	return true
}

// pseudosValid reports whether the pseudo fields are a request's, each
// at most once.
func pseudosValid(fields []hpack.HeaderField) bool {
	for i, f := range fields {
		if !f.IsPseudo() {
			return true
		}
		switch f.Name {
		case ":method", ":path", ":scheme", ":authority", ":protocol":
		default:
			return false
		}
		for _, o := range fields[:i] {
			if o.Name == f.Name {
				return false
			}
		}
	}
	return true
}
