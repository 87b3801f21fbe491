package doh

import (
	"bytes"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

func query(t *testing.T, name string) []byte {
	t.Helper()
	q := new(dns.Msg)
	q.SetQuestion(name, dns.TypeA)
	q.Id = 0
	b, err := q.Pack()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// answerA answers every query with one A record of TTL 120 and an NS of
// TTL 60 in the authority section; a name under nx. gets NXDOMAIN with
// an SOA (TTL 900, minimum 30); drop. gets nothing.
func answerA(q *dns.Msg, _ []byte) (*dns.Msg, int) {
	m := new(dns.Msg)
	m.SetReply(q)
	name := q.Question[0].Name
	switch {
	case strings.HasSuffix(name, "drop."):
		return nil, http.StatusServiceUnavailable
	case strings.HasSuffix(name, "nx."):
		m.Rcode = dns.RcodeNameError
		soa, _ := dns.NewRR("nx. 900 IN SOA ns.nx. host.nx. 1 3600 600 86400 30")
		m.Ns = append(m.Ns, soa)
	case strings.HasSuffix(name, "fail."):
		m.Rcode = dns.RcodeServerFailure
	default:
		a, _ := dns.NewRR(name + " 120 IN A 192.0.2.1")
		ns, _ := dns.NewRR(name + " 60 IN NS ns.example.")
		m.Answer = append(m.Answer, a)
		m.Ns = append(m.Ns, ns)
	}
	return m, http.StatusOK
}

func TestHandler(t *testing.T) {
	get := func(b []byte) *http.Request {
		return httptest.NewRequest("GET", "/dns-query?dns="+base64.RawURLEncoding.EncodeToString(b), nil)
	}
	post := func(ct string, b []byte) *http.Request {
		r := httptest.NewRequest("POST", "/dns-query", bytes.NewReader(b))
		if ct != "" {
			r.Header.Set("Content-Type", ct)
		}
		return r
	}
	padded := httptest.NewRequest("GET", "/dns-query?dns="+base64.URLEncoding.EncodeToString(query(t, "www.example.")), nil)
	for _, tc := range []struct {
		name   string
		req    *http.Request
		status int
		cache  string // the Cache-Control wanted
		answer string // a record the answer must hold
	}{
		{"get", get(query(t, "www.example.")), 200, "max-age=60", "192.0.2.1"},
		{"get padded", padded, 200, "max-age=60", "192.0.2.1"},
		{"post", post("application/dns-message", query(t, "www.example.")), 200, "max-age=60", "192.0.2.1"},
		{"post with parameters", post("application/dns-message; charset=binary", query(t, "www.example.")), 200, "max-age=60", "192.0.2.1"},
		{"nxdomain takes the soa minimum", get(query(t, "a.nx.")), 200, "max-age=30", "NXDOMAIN"},
		{"servfail is not kept", get(query(t, "a.fail.")), 200, "", "SERVFAIL"},
		{"no dns parameter", httptest.NewRequest("GET", "/dns-query", nil), 400, "no-store", ""},
		{"not base64url", httptest.NewRequest("GET", "/dns-query?dns=%%%", nil), 400, "no-store", ""},
		{"not a message", get([]byte{1, 2, 3}), 400, "no-store", ""},
		{"post of another type", post("text/plain", query(t, "www.example.")), 415, "no-store", ""},
		{"post without a type", post("", query(t, "www.example.")), 415, "no-store", ""},
		{"post too large", post("application/dns-message", make([]byte, 70000)), 413, "no-store", ""},
		{"put", httptest.NewRequest("PUT", "/dns-query", nil), 405, "no-store", ""},
		{"no answer", get(query(t, "x.drop.")), 503, "no-store", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &Handler{Answer: answerA, Stats: new(Stats)}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, tc.req)
			res := w.Result()
			body, _ := io.ReadAll(res.Body)
			if res.StatusCode != tc.status {
				t.Fatalf("status %d, want %d (%s)", res.StatusCode, tc.status, body)
			}
			if got := res.Header.Get("Cache-Control"); got != tc.cache {
				t.Errorf("Cache-Control %q, want %q", got, tc.cache)
			}
			c := h.Stats.Counts()
			if tc.status != 200 {
				if c.Errors() != 1 || c.Answers != 0 {
					t.Errorf("counts %+v: want one error", c)
				}
				return
			}
			if ct := res.Header.Get("Content-Type"); ct != ContentType {
				t.Errorf("Content-Type %q", ct)
			}
			m := new(dns.Msg)
			if err := m.Unpack(body); err != nil {
				t.Fatalf("answer: %v", err)
			}
			if !strings.Contains(m.String(), tc.answer) {
				t.Errorf("answer lacks %q:\n%s", tc.answer, m)
			}
			if c.Answers != 1 || c.Get+c.Post != 1 || c.Errors() != 0 {
				t.Errorf("counts %+v", c)
			}
		})
	}
}

func TestMaxAge(t *testing.T) {
	rr := func(s string) dns.RR {
		r, err := dns.NewRR(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	m := new(dns.Msg)
	if _, ok := MaxAge(m); ok {
		t.Error("an empty answer has a max-age")
	}
	m.SetEdns0(1232, false) // the OPT record's TTL field is flags, not a TTL
	m.Answer = []dns.RR{rr("a. 300 IN A 192.0.2.1"), rr("a. 200 IN A 192.0.2.2")}
	m.Extra = append(m.Extra, rr("ns.a. 400 IN A 192.0.2.3"))
	if age, ok := MaxAge(m); !ok || age != 200 {
		t.Errorf("MaxAge %d %v, want 200", age, ok)
	}
	// With answers, an SOA's own TTL counts, not its minimum.
	m.Ns = []dns.RR{rr("a. 100 IN SOA ns.a. h.a. 1 2 3 4 5")}
	if age, _ := MaxAge(m); age != 100 {
		t.Errorf("MaxAge %d, want 100", age)
	}
}
