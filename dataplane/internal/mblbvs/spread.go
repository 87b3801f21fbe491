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
	mv.vs.Prof.HTTP.Request(h)
	persistCookie := mv.cfg.Request.HTTP.Cookie.Name
	var xff []byte
	var user uint64
	// The framer validated the head: its lines are walked here without
	// checking them again, looking only at the two names that matter.
	head := b[:h.HeaderEnd]
	i := bytes.IndexByte(head, '\n') + 1 // after the request line
	for i > 0 && i < len(head) {
		line := head[i:]
		next := len(head)
		if k := bytes.IndexByte(line, '\n'); k >= 0 {
			line, next = line[:k], i+k+1
		}
		i = next
		c := bytes.IndexByte(line, ':')
		if c <= 0 || (line[0]|0x20 != 'x' && line[0]|0x20 != 'c') {
			continue
		}
		n, v := line[:c], bytes.TrimSpace(line[c+1:])
		switch {
		case xff == nil && foldEq(n, "x-forwarded-for"):
			if k := bytes.IndexByte(v, ','); k >= 0 {
				v = v[:k]
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
	}
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
