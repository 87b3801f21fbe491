package render

import (
	"io"

	"github.com/openltm/openltm/dataplane/doh"
)

// DoHProfile prints show ltm profile doh-server|doh-proxy NAME: the DoH
// requests by method, the DNS answers sent and the requests that got
// none, by why, and the DoH requests a doh-proxy sent to its DoH members
// (server-ssl) and those that failed (zero on a doh-server) [M: BIG-IP's own show of these profiles is not
// documented].
func DoHProfile(w io.Writer, title, name string, c doh.Counts, o Options) error {
	return statBlock(w, title+": "+o.rel(name), [][2]string{
		{"Requests", ""},
		{"GET", o.num(c.Get)},
		{"POST", o.num(c.Post)},
		{"Answers", o.num(c.Answers)},
		{"Errors", o.num(c.Errors())},
		{"Bad Request (400)", o.num(c.BadRequests)},
		{"Method Not Allowed (405)", o.num(c.BadMethod)},
		{"Too Large (413)", o.num(c.TooLarge)},
		{"Unsupported Media (415)", o.num(c.BadMedia)},
		{"No Answer (503)", o.num(c.NoAnswer)},
		{"Bad Gateway (502)", o.num(c.BadGateway)},
		{"DoH Servers", ""},
		{"Requests", o.num(c.MemberRequests)},
		{"Failures", o.num(c.MemberFailures)},
	})
}
