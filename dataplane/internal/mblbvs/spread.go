package mblbvs

import (
	"bytes"
	"net/netip"

	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/dataplane/internal/state"
)

// observeRequest counts one HTTP request of the virtual in its Spread: the
// client's address, the first X-Forwarded-For value, and the user the
// request belongs to, told by its cookies (the persistence cookies left
// out: they name a member, not a user), else by its X-Forwarded-For. It
// reads the head the framer already parsed and allocates nothing.
func (mv *VS) observeRequest(client netip.AddrPort, b []byte, h *httpx.Head) {
	persistCookie := mv.cfg.Request.HTTP.Cookie.Name
	var xff []byte
	var user uint64
	httpx.Fields(b, h.HeaderEnd, func(n, v []byte, _, _ int) bool {
		switch {
		case xff == nil && foldEq(n, "x-forwarded-for"):
			if i := bytes.IndexByte(v, ','); i >= 0 {
				v = v[:i]
			}
			xff = bytes.TrimSpace(v)
		case foldEq(n, "cookie"):
			for len(v) > 0 {
				pair := v
				if k := bytes.IndexByte(v, ';'); k >= 0 {
					pair, v = v[:k], v[k+1:]
				} else {
					v = nil
				}
				pair = bytes.TrimSpace(pair)
				name := pair
				if eq := bytes.IndexByte(pair, '='); eq >= 0 {
					name = pair[:eq]
				}
				if len(pair) == 0 || bytes.HasPrefix(name, []byte("BIGipServer")) || string(name) == persistCookie {
					continue
				}
				user = state.Combine(user, pair)
			}
		}
		return true
	})
	if user == 0 && len(xff) > 0 {
		user = state.UserHash(xff)
	}
	mv.vs.Spread.Request(client.Addr(), xff, user)
}

// foldEq compares a header name with a lower-case name, ignoring ASCII
// case.
func foldEq(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}
