package mblb

// StatusSet is a set of HTTP status codes (100 to 599), one bit each, so
// that the response path tests a member's status with one shift and no
// allocation.
type StatusSet [10]uint64

// Add puts the codes lo to hi (inclusive) in the set; codes outside 100
// to 599 are ignored (the daemon refuses them before).
func (s *StatusSet) Add(lo, hi int) {
	for c := max(lo, 0); c <= hi && c < 600; c++ {
		s[c/64] |= 1 << (c % 64)
	}
}

// Has reports whether code is in the set.
func (s *StatusSet) Has(code int) bool {
	return code >= 0 && code < 600 && s[code/64]&(1<<(code%64)) != 0
}

// fallbackOnStatus is the redirect to the fallback host that replaces a
// member's response whose status is one of fallback-status-codes, or nil
// when the response goes on: no such codes, no fallback host (the
// profile's or HTTP::fallback's), or a response that makes the
// connection a tunnel. A streamed response's body is then read and
// dropped (bodyStream.discard), so that the server connection stays
// reusable when the member keeps it open.
func (sc *serverConn) fallbackOnStatus(req *msg, status int) *msg {
	if !sc.fallsBack(req, status) {
		return nil
	}
	b := sc.e.fallbackResponse(req.hx.fallback)
	r := getMsg(len(b))
	copy(r.b, b)
	r.closeAfter = true // the redirect says Connection: close
	if sc.strm.head {
		sc.strm.discard = true
	}
	return r
}

// fallsBack reports whether a response with status to req is replaced by
// the fallback redirect (fallbackOnStatus); such a response is not
// cached either, so that the cache never answers it in the redirect's
// place.
func (sc *serverConn) fallsBack(req *msg, status int) bool {
	fs := sc.e.cfg.Request.HTTP.FallbackStatus
	return fs != nil && fs.Has(status) && req.hx.fallback != "" && sc.tun == nil
}
