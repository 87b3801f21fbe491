package wsframe

import (
	"bytes"
	"strconv"
)

// The websocket profile's window-bits bounds the LZ77 window of
// permessage-deflate (RFC 7692) on an upgraded connection. openltm passes
// the extension end to end (the payloads cross compressed, as the two
// ends negotiated them), so the bound is put into the client's offer on
// its way to the member: server_max_window_bits, which a client accepts
// whether or not it asked for it (RFC 7692 7.1.2.1), bounds the member's
// compressor, and client_max_window_bits, which a server may only answer
// when the client offered it (7.1.2.2), bounds the client's when the
// client said it can be bounded. The member's answer then names the
// windows both ends use, and the client reads it unchanged.

// MinWindowBits and MaxWindowBits are the range of window-bits; 8 is
// accepted, as RFC 7692 allows it, but offered as 9: zlib, the deflate
// most members run, cannot compress raw deflate with a 256-byte window
// and fails the connection when told to.
const (
	MinWindowBits = 8
	MaxWindowBits = 15
)

// LimitDeflateOffer is the Sec-WebSocket-Extensions value that replaces
// the client's offers (values: every such field's value, in order) so
// that each permessage-deflate offer bounds the windows to bits; changed
// is false when no offer needed a change (the field then goes as it
// came). Other extensions and parameters pass as they are.
func LimitDeflateOffer(values [][]byte, bits int) (out []byte, changed bool) {
	bits = min(max(bits, MinWindowBits+1), MaxWindowBits)
	for _, v := range values {
		for len(v) > 0 {
			ext := v
			if i := bytes.IndexByte(v, ','); i >= 0 {
				ext, v = v[:i], v[i+1:]
			} else {
				v = nil
			}
			ext = bytes.TrimSpace(ext)
			if len(ext) == 0 {
				continue
			}
			if len(out) > 0 {
				out = append(out, ", "...)
			}
			var c bool
			out, c = limitOne(out, ext, bits)
			changed = changed || c
		}
	}
	return out, changed
}

// limitOne appends one extension offer, bounded when it is
// permessage-deflate.
func limitOne(dst, ext []byte, bits int) ([]byte, bool) {
	parts := bytes.Split(ext, []byte(";"))
	name := bytes.TrimSpace(parts[0])
	if !bytes.EqualFold(name, []byte("permessage-deflate")) {
		return append(dst, ext...), false
	}
	dst = append(dst, name...)
	changed, sawServer := false, false
	for _, p := range parts[1:] {
		p = bytes.TrimSpace(p)
		k, val, hasVal := bytes.Cut(p, []byte("="))
		k = bytes.TrimSpace(k)
		isServer := bytes.EqualFold(k, []byte("server_max_window_bits"))
		if isServer || bytes.EqualFold(k, []byte("client_max_window_bits")) {
			sawServer = sawServer || isServer
			n := MaxWindowBits + 1
			if hasVal {
				if x, err := strconv.Atoi(string(bytes.Trim(bytes.TrimSpace(val), `"`))); err == nil {
					n = x
				}
			}
			if n > bits {
				dst = append(dst, "; "...)
				dst = append(dst, k...)
				dst = append(dst, '=')
				dst = strconv.AppendInt(dst, int64(bits), 10)
				changed = true
				continue
			}
		}
		dst = append(dst, "; "...)
		dst = append(dst, p...)
	}
	if !sawServer {
		dst = append(dst, "; server_max_window_bits="...)
		dst = strconv.AppendInt(dst, int64(bits), 10)
		changed = true
	}
	return dst, changed
}
