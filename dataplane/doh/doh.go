// Package doh serves DNS over HTTPS (RFC 8484) on the virtuals with a
// doh-server or doh-proxy profile, as BIG-IP 16.1 and later do: each
// HTTP request (GET with ?dns=, POST of application/dns-message, over
// HTTP/1.1 or HTTP/2, in TLS or cleartext) carries one DNS query, which
// the virtual's dns profile answers (doh-server: the wide IPs, DNS
// Express, the cache, then the pool, dataplane/dnsvs) or a member of its
// pool answers (doh-proxy: as DoH with a server-ssl profile, Upstream,
// else as DNS), and the answer goes back as the HTTP response. README.md
// says what is [M].
package doh

import (
	"encoding/base64"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/miekg/dns"
)

// ContentType is RFC 8484's media type of a DNS message.
const ContentType = "application/dns-message"

// maxQuery is the largest query a request may carry: a DNS message's
// 16-bit length.
const maxQuery = dns.MaxMsgSize

// AnswerFunc answers one query (wire, as the client sent it): status is
// 200 with the answer m, else the HTTP status the client gets (503: the
// query was dropped or no member answered; 502: a doh-proxy's DoH
// members all failed).
type AnswerFunc func(q *dns.Msg, wire []byte) (m *dns.Msg, status int)

// Stats are a doh profile's counters, summed over the virtuals using it
// and kept across commits by the profile's name.
type Stats struct {
	// Get and Post count the DoH requests by method.
	Get, Post atomic.Uint64
	// Answers counts the DNS answers sent back.
	Answers atomic.Uint64
	// BadRequests counts the requests answered 400 (no or undecodable
	// dns parameter, a message that is not a query), BadMedia those
	// answered 415 (a POST of another content type), BadMethod those
	// answered 405, TooLarge those answered 413.
	BadRequests, BadMedia, BadMethod, TooLarge atomic.Uint64
	// NoAnswer counts the queries that got none (dropped, no member
	// answered): answered 503.
	NoAnswer atomic.Uint64
	// BadGateway counts the queries a doh-proxy sent to its DoH members
	// that none answered: answered 502.
	BadGateway atomic.Uint64
	// MemberRequests counts the DoH requests a doh-proxy sent to its
	// members, MemberFailures those that failed (no connection, no TLS
	// handshake, a status other than 200, no DNS answer in the body).
	MemberRequests, MemberFailures atomic.Uint64
}

// Counts are Stats read at once, for show.
type Counts struct {
	Get, Post, Answers, BadRequests, BadMedia, BadMethod, TooLarge, NoAnswer uint64
	BadGateway, MemberRequests, MemberFailures                               uint64
}

// Counts reads the counters.
func (st *Stats) Counts() Counts {
	return Counts{Get: st.Get.Load(), Post: st.Post.Load(), Answers: st.Answers.Load(), BadRequests: st.BadRequests.Load(),
		BadMedia: st.BadMedia.Load(), BadMethod: st.BadMethod.Load(), TooLarge: st.TooLarge.Load(), NoAnswer: st.NoAnswer.Load(),
		BadGateway: st.BadGateway.Load(), MemberRequests: st.MemberRequests.Load(), MemberFailures: st.MemberFailures.Load()}
}

// Errors is every request that got no DNS answer.
func (c Counts) Errors() uint64 {
	return c.BadRequests + c.BadMedia + c.BadMethod + c.TooLarge + c.NoAnswer + c.BadGateway
}

// Reset zeroes the counters (reset-stats).
func (st *Stats) Reset() {
	for _, c := range []*atomic.Uint64{&st.Get, &st.Post, &st.Answers, &st.BadRequests, &st.BadMedia, &st.BadMethod, &st.TooLarge, &st.NoAnswer,
		&st.BadGateway, &st.MemberRequests, &st.MemberFailures} {
		c.Store(0)
	}
}

// Registry keeps the profiles' counters by name across commits.
type Registry struct {
	mu    sync.Mutex
	stats map[string]*Stats
}

// Keep gives the named profiles their counters, the ones they had when
// they were already in use; the others are dropped.
func (g *Registry) Keep(names []string) map[string]*Stats {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make(map[string]*Stats, len(names))
	for _, n := range names {
		st := g.stats[n]
		if st == nil {
			st = new(Stats)
		}
		out[n] = st
	}
	g.stats = out
	return out
}

// Stats is the named profile's counters; nil when no virtual uses it.
func (g *Registry) Stats(name string) *Stats {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.stats[name]
}

// Handler is the HTTP side of one client connection: it takes the query
// out of each request and writes the answer back.
type Handler struct {
	Answer AnswerFunc
	Stats  *Stats
}

// ServeHTTP implements http.Handler. Any path is taken [M: BIG-IP's doh
// profiles have no path setting; clients use /dns-query].
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var wire []byte
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		h.Stats.Get.Add(1)
		q := r.URL.Query().Get("dns")
		if q == "" {
			h.fail(w, &h.Stats.BadRequests, http.StatusBadRequest, "the dns parameter is missing")
			return
		}
		// RFC 8484 sends base64url without padding; a padded one is
		// taken too.
		b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(q, "="))
		if err != nil {
			h.fail(w, &h.Stats.BadRequests, http.StatusBadRequest, "the dns parameter is not base64url")
			return
		}
		wire = b
	case http.MethodPost:
		h.Stats.Post.Add(1)
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != ContentType {
			h.fail(w, &h.Stats.BadMedia, http.StatusUnsupportedMediaType, "the body must be "+ContentType)
			return
		}
		b, err := io.ReadAll(io.LimitReader(r.Body, maxQuery+1))
		if err != nil {
			h.fail(w, &h.Stats.BadRequests, http.StatusBadRequest, "the body could not be read")
			return
		}
		if len(b) > maxQuery {
			h.fail(w, &h.Stats.TooLarge, http.StatusRequestEntityTooLarge, "a DNS message is at most 65535 bytes")
			return
		}
		wire = b
	default:
		w.Header().Set("Allow", "GET, POST")
		h.fail(w, &h.Stats.BadMethod, http.StatusMethodNotAllowed, "DNS over HTTPS takes GET and POST")
		return
	}
	q := new(dns.Msg)
	if err := q.Unpack(wire); err != nil || q.Response || len(q.Question) == 0 {
		h.fail(w, &h.Stats.BadRequests, http.StatusBadRequest, "the message is not a DNS query")
		return
	}
	m, status := h.Answer(q, wire)
	switch {
	case status == http.StatusBadGateway:
		h.fail(w, &h.Stats.BadGateway, status, "no member answered")
		return
	case status != http.StatusOK || m == nil:
		h.fail(w, &h.Stats.NoAnswer, http.StatusServiceUnavailable, "no answer")
		return
	}
	m.Id = q.Id
	out, err := m.Pack()
	if err != nil {
		h.fail(w, &h.Stats.NoAnswer, http.StatusServiceUnavailable, "no answer")
		return
	}
	h.Stats.Answers.Add(1)
	hd := w.Header()
	hd.Set("Content-Type", ContentType)
	hd.Set("Content-Length", strconv.Itoa(len(out)))
	if age, ok := MaxAge(m); ok {
		hd.Set("Cache-Control", "max-age="+strconv.FormatUint(uint64(age), 10))
	}
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(out)
	}
}

// fail answers a request that gets no DNS answer with status and a line
// saying why, counting it in c.
func (h *Handler) fail(w http.ResponseWriter, c *atomic.Uint64, status int, why string) {
	c.Add(1)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	io.WriteString(w, why+"\n")
}

// MaxAge is how long the HTTP answer carrying m may be kept (RFC 8484
// 5.1): the smallest TTL of its records, the OPT record aside; for an
// answer without answer records (NXDOMAIN, NODATA) its SOA's TTL within
// the SOA minimum (RFC 2308). ok is false when m has no record that
// says (a SERVFAIL, a REFUSED): no Cache-Control is sent [M].
func MaxAge(m *dns.Msg) (age uint32, ok bool) {
	see := func(rr dns.RR) {
		t := rr.Header().Ttl
		if soa, isSOA := rr.(*dns.SOA); isSOA && len(m.Answer) == 0 && soa.Minttl < t {
			t = soa.Minttl
		}
		if !ok || t < age {
			age, ok = t, true
		}
	}
	for _, sec := range [][]dns.RR{m.Answer, m.Ns, m.Extra} {
		for _, rr := range sec {
			if rr.Header().Rrtype == dns.TypeOPT {
				continue
			}
			see(rr)
		}
	}
	return age, ok
}
