package httpx

import "strconv"

// Encoding describes a body the proxy re-encodes on its way to a client
// (an http-compression profile): the head then names the new coding and
// loses what described the member's bytes.
type Encoding struct {
	// Coding is the Content-Encoding value ("gzip", "deflate").
	Coding string
	// Vary adds Accept-Encoding to the Vary field (created if absent),
	// so that caches keep the encoded and plain answers apart.
	Vary bool
}

// SetEncoded appends to dst the header block head (complete, blank line
// included) for a body encoded as enc says, framed by length when it is
// known (≥ 0), else chunked (an HTTP/1.1 client) or ended by the close.
// The member's Content-Length, Transfer-Encoding and Content-MD5 go (they
// described other bytes), a strong ETag becomes weak (the bytes differ,
// the resource does not, as RFC 9110 8.8.1 allows), and Content-Encoding
// is added.
func SetEncoded(dst, head []byte, enc Encoding, length int, chunked bool) []byte {
	varied := false
	dst, bl := rewriteFields(dst, head, func(dst, l, name, value []byte) ([]byte, bool) {
		switch {
		case EqualFold(name, "content-length"), EqualFold(name, "transfer-encoding"), EqualFold(name, "content-md5"),
			length < 0 && !chunked && EqualFold(name, "connection"):
			return dst, true
		case EqualFold(name, "etag") && len(value) > 0 && value[0] == '"':
			dst = append(dst, name...)
			dst = append(dst, ": W/"...)
			dst = append(dst, value...)
			return append(dst, "\r\n"...), true
		case enc.Vary && EqualFold(name, "vary"):
			varied = true
			dst = append(dst, l...)
			if !containsToken(value, "accept-encoding") && !containsToken(value, "*") {
				if len(value) > 0 {
					dst = append(dst, ", Accept-Encoding"...)
				} else {
					dst = append(dst, "Accept-Encoding"...)
				}
			}
			return append(dst, "\r\n"...), true
		}
		return dst, false
	})
	if enc.Vary && !varied {
		dst = append(dst, "Vary: Accept-Encoding\r\n"...)
	}
	dst = append(dst, "Content-Encoding: "...)
	dst = append(dst, enc.Coding...)
	dst = append(dst, "\r\n"...)
	switch {
	case length >= 0:
		dst = append(dst, "Content-Length: "...)
		dst = strconv.AppendInt(dst, int64(length), 10)
		dst = append(dst, "\r\n"...)
	case chunked:
		dst = append(dst, "Transfer-Encoding: chunked\r\n"...)
	default:
		dst = append(dst, "Connection: close\r\n"...)
	}
	return append(dst, head[bl:]...)
}
