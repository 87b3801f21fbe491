package dataplane

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/xmlcbr"
)

// startXMLServer answers every request with its label and, in X-Got,
// the body it received.
func startXMLServer(t *testing.T, addr, label string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if len(b) <= 1024 {
			w.Header().Set("X-Got", string(b))
		}
		w.Header().Set("X-Got-Length", strconv.Itoa(len(b)))
		io.WriteString(w, label)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

const xmlRouteRule = `
when HTTP_REQUEST {
    # (A pool a rule picks stays the connection's until another is.)
    pool /Common/pool
    if { [HTTP::uri] eq "/off" } { XML::disable } else { XML::enable }
}
when XML_CONTENT_BASED_ROUTING {
    set seen {}
    for {set i 0} {$i < $XML_count} {incr i} {
        lappend seen "$XML_queries($i)=$XML_values($i)"
        if { $XML_values($i) eq "Route to Financing" } { pool /Common/finance }
    }
    HTTP::header insert X-XML-Matches $seen
    if { [HTTP::uri] eq "/edit" } { XML::payload replace 0 0 "<!-- routed -->" }
}
`

const financeDoc = `<?xml version="1.0" encoding="UTF-8"?>` +
	`<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:eai="urn:eai">` +
	`<soapenv:Body><eai:Order><FinanceObject>Route to Financing</FinanceObject></eai:Order></soapenv:Body>` +
	`</soapenv:Envelope>`

// TestHTTPXMLProfile: with an xml profile, a request whose XML body
// matches the profile's queries runs XML_CONTENT_BASED_ROUTING, and the
// pool the rule picks there is where it goes; a body that matches
// nothing, is not well-formed, is not XML or is too long to hold goes to
// the virtual's pool unchanged; XML::payload replace changes the body
// the member gets; XML::disable skips the profile.
func TestHTTPXMLProfile(t *testing.T) {
	const vs, general, finance = "127.139.0.10:80", "127.139.0.11:80", "127.139.0.12:80"
	startXMLServer(t, general, "general")
	startXMLServer(t, finance, "finance")
	prof, err := xmlcbr.Compile("/Common/x", map[string]string{"s": "http://schemas.xmlsoap.org/soap/envelope/"},
		[]string{"/s:Envelope/s:Body//FinanceObject", "//Amount"}, true)
	if err != nil {
		t.Fatal(err)
	}
	cfg := mblbConfig(vs, &MBLB{Request: mblb.Framing{Mode: mblb.HTTP, HTTP: mblb.HTTPOptions{XML: prof}}}, general)
	fa := ap(finance)
	cfg.Pools["/Common/finance"] = &Pool{Name: "/Common/finance", LBMode: RoundRobin,
		Members: []Member{{Node: "/Common/" + fa.Addr().String(), Addr: fa}}}
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, xmlRouteRule)
	p, _ := newPlane(t)
	mustApply(t, p, cfg)

	big := "<a>" + strings.Repeat("<Amount>1</Amount>", 70000) + "</a>" // over the engine's 1 MB
	cases := []struct {
		name, path, ctype, body string
		chunked                 bool
		member, got             string
	}{
		{name: "routed by content", path: "/", ctype: "text/xml", body: financeDoc, member: "finance", got: financeDoc},
		{name: "soap+xml chunked", path: "/", ctype: "application/soap+xml; charset=utf-8", body: financeDoc, chunked: true, member: "finance", got: financeDoc},
		{name: "both queries", path: "/", ctype: "application/xml", body: "<o><FinanceObject>x</FinanceObject><Amount>7</Amount></o>", member: "general"},
		{name: "matches nothing", path: "/", ctype: "text/xml", body: "<o><Other/></o>", member: "general", got: "<o><Other/></o>"},
		{name: "edited document", path: "/edit", ctype: "text/xml", body: financeDoc, member: "finance", got: "<!-- routed -->" + financeDoc},
		{name: "malformed", path: "/", ctype: "text/xml", body: "<o><Amount>7</o>", member: "general", got: "<o><Amount>7</o>"},
		{name: "not an XML type", path: "/", ctype: "text/plain", body: financeDoc, member: "general", got: financeDoc},
		{name: "disabled", path: "/off", ctype: "text/xml", body: financeDoc, member: "general", got: financeDoc},
		{name: "over the buffer", path: "/", ctype: "text/xml", body: big, member: "general"},
	}
	cl := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	defer cl.CloseIdleConnections()
	for round := 0; round < 2; round++ { // the second round reuses the connection
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/%d", c.name, round), func(t *testing.T) {
				var body io.Reader = strings.NewReader(c.body)
				if c.chunked {
					body = io.MultiReader(strings.NewReader(c.body)) // no length: sent chunked
				}
				req, _ := http.NewRequest("POST", "http://"+vs+c.path, body)
				req.Header.Set("Content-Type", c.ctype)
				resp, err := cl.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					t.Fatal(err)
				}
				if resp.StatusCode != 200 || string(b) != c.member {
					t.Fatalf("answer %d %q, want 200 %q", resp.StatusCode, b, c.member)
				}
				if c.got != "" && resp.Header.Get("X-Got") != c.got {
					t.Fatalf("member got %q, want %q", resp.Header.Get("X-Got"), c.got)
				}
				if n := resp.Header.Get("X-Got-Length"); c.got == "" && n != strconv.Itoa(len(c.body)) {
					t.Fatalf("member got %s bytes, want %d", n, len(c.body))
				}
			})
		}
	}
}

// TestHTTPXMLMatchesSeen: the matches XML_CONTENT_BASED_ROUTING sees
// reach the member in the header the rule inserts there, first query
// only without multiple-query-matches.
func TestHTTPXMLMatchesSeen(t *testing.T) {
	const vs, member = "127.139.0.20:80", "127.139.0.21:80"
	ln, err := net.Listen("tcp", member)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, r.Header.Get("X-XML-Matches"))
	})}
	go srv.Serve(ln)
	defer srv.Close()
	for _, multiple := range []bool{false, true} {
		prof, err := xmlcbr.Compile("/Common/x", nil, []string{"//Missing", "//Amount", "/o/@id"}, multiple)
		if err != nil {
			t.Fatal(err)
		}
		cfg := mblbConfig(vs, &MBLB{Request: mblb.Framing{Mode: mblb.HTTP, HTTP: mblb.HTTPOptions{XML: prof}}}, member)
		cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, xmlRouteRule)
		p, _ := newPlane(t)
		mustApply(t, p, cfg)
		conn, err := net.DialTimeout("tcp", vs, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		body := `<o id="42"><Amount>7</Amount></o>`
		conn.Write([]byte("POST / HTTP/1.1\r\nHost: h\r\nContent-Type: text/xml\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		conn.Close()
		want := "//Amount=7"
		if multiple {
			want = "//Amount=7 /o/@id=42"
		}
		if string(b) != want {
			t.Errorf("multiple=%v: the rule saw %q, want %q", multiple, b, want)
		}
		p.Close()
	}
}

// TestHTTPXMLAbortAndBuffer: with abort-on-error a body that is not
// well-formed resets the client's connection (no member sees it);
// without it such a body goes on unparsed; a body over max-buffer-size
// goes on unparsed either way. show ltm profile xml counts the
// documents inspected, by matches, and the malformed ones.
func TestHTTPXMLAbortAndBuffer(t *testing.T) {
	const vs, general, finance = "127.139.0.30:80", "127.139.0.31:80", "127.139.0.32:80"
	startXMLServer(t, general, "general")
	startXMLServer(t, finance, "finance")
	prof, err := xmlcbr.Compile("/Common/x", nil, []string{"//FinanceObject"}, false)
	if err != nil {
		t.Fatal(err)
	}
	prof.AbortOnError, prof.MaxBufferSize = true, 300
	cfg := mblbConfig(vs, &MBLB{Request: mblb.Framing{Mode: mblb.HTTP, HTTP: mblb.HTTPOptions{XML: prof}}}, general)
	fa := ap(finance)
	cfg.Pools["/Common/finance"] = &Pool{Name: "/Common/finance", LBMode: RoundRobin,
		Members: []Member{{Node: "/Common/" + fa.Addr().String(), Addr: fa}}}
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, xmlRouteRule)
	p, _ := newPlane(t)
	mustApply(t, p, cfg)

	post := func(body string) (string, error) {
		conn, err := net.DialTimeout("tcp", vs, 5*time.Second)
		if err != nil {
			return "", err
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		conn.Write([]byte("POST / HTTP/1.1\r\nHost: h\r\nContent-Type: text/xml\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			return "", err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		return string(b), err
	}
	padded := "<o><FinanceObject>Route to Financing</FinanceObject>" + strings.Repeat("<p/>", 70) + "</o>" // over 300 bytes
	for _, c := range []struct {
		name, body, member string
	}{
		{"matched", "<o><FinanceObject>Route to Financing</FinanceObject></o>", "finance"},
		{"no match", "<o/>", "general"},
		{"over max-buffer-size", padded, "general"},
		{"malformed aborts", "<o><FinanceObject>", ""},
	} {
		got, err := post(c.body)
		if c.member == "" {
			if err == nil {
				t.Errorf("%s: answered %q, want the connection reset", c.name, got)
			}
			continue
		}
		if err != nil || got != c.member {
			t.Errorf("%s: answer %q (%v), want %q", c.name, got, err, c.member)
		}
	}
	st := p.ProfileStats(ProfileXML, "/Common/x", []string{"/Common/vs"}).XML
	if want := (XMLProfileStats{Inspected: 3, OneMatch: 1, NoMatch: 1, Malformed: 1}); st != want {
		t.Errorf("stats %+v, want %+v", st, want)
	}
	p.ResetProfileStats(ProfileXML, "/Common/x", []string{"/Common/vs"})
	if st := p.ProfileStats(ProfileXML, "/Common/x", []string{"/Common/vs"}).XML; st != (XMLProfileStats{}) {
		t.Errorf("after reset-stats %+v", st)
	}

	// Without abort-on-error the malformed body reaches the member.
	prof2, _ := xmlcbr.Compile("/Common/x", nil, []string{"//FinanceObject"}, false)
	cfg.Virtuals["/Common/vs"].MBLB.Request.HTTP.XML = prof2
	mustApply(t, p, cfg)
	if got, err := post("<o><FinanceObject>"); err != nil || got != "general" {
		t.Errorf("malformed without abort-on-error: %q (%v), want general", got, err)
	}
}

// TestHTTPXMLStreamed: a body that arrives after its head (a slow
// client, one that waits for 100 Continue, a chunked one) is read whole
// before the profile parses it, when max-buffer-size allows; a longer
// one goes on unparsed. A document the rule replaced takes the streamed
// body's place.
func TestHTTPXMLStreamed(t *testing.T) {
	const vs, general, finance = "127.139.0.40:80", "127.139.0.41:80", "127.139.0.42:80"
	startXMLServer(t, general, "general")
	startXMLServer(t, finance, "finance")
	prof, err := xmlcbr.Compile("/Common/x", nil, []string{"//FinanceObject"}, false)
	if err != nil {
		t.Fatal(err)
	}
	prof.MaxBufferSize = 512
	cfg := mblbConfig(vs, &MBLB{Request: mblb.Framing{Mode: mblb.HTTP, HTTP: mblb.HTTPOptions{XML: prof}}}, general)
	fa := ap(finance)
	cfg.Pools["/Common/finance"] = &Pool{Name: "/Common/finance", LBMode: RoundRobin,
		Members: []Member{{Node: "/Common/" + fa.Addr().String(), Addr: fa}}}
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, xmlRouteRule)
	p, _ := newPlane(t)
	mustApply(t, p, cfg)

	doc := "<o><FinanceObject>Route to Financing</FinanceObject></o>"
	long := "<o><FinanceObject>Route to Financing</FinanceObject>" + strings.Repeat("<p/>", 200) + "</o>"
	chunk := func(s string) string { return fmt.Sprintf("%x\r\n%s\r\n", len(s), s) }
	for _, c := range []struct {
		name, path, head, body, member, got string
	}{
		{"split content-length", "/", "Content-Length: " + strconv.Itoa(len(doc)) + "\r\n", doc, "finance", doc},
		{"100 continue", "/", "Expect: 100-continue\r\nContent-Length: " + strconv.Itoa(len(doc)) + "\r\n", doc, "finance", doc},
		{"split chunked", "/", "Transfer-Encoding: chunked\r\n", chunk(doc[:10]) + chunk(doc[10:]) + "0\r\n\r\n", "finance", doc},
		{"split and edited", "/edit", "Content-Length: " + strconv.Itoa(len(doc)) + "\r\n", doc, "finance", "<!-- routed -->" + doc},
		{"split over max-buffer-size", "/", "Content-Length: " + strconv.Itoa(len(long)) + "\r\n", long, "general", long},
		{"chunked over max-buffer-size", "/", "Transfer-Encoding: chunked\r\n", chunk(long[:300]) + chunk(long[300:]) + "0\r\n\r\n", "general", long},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn, err := net.DialTimeout("tcp", vs, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(10 * time.Second))
			if _, err := conn.Write([]byte("POST " + c.path + " HTTP/1.1\r\nHost: h\r\nContent-Type: text/xml\r\n" + c.head + "\r\n")); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(conn)
			if strings.Contains(c.head, "100-continue") {
				line, err := br.ReadString('\n')
				if err != nil || !strings.Contains(line, " 100 ") {
					t.Fatalf("interim %q (%v), want 100 Continue", line, err)
				}
				for line != "\r\n" && err == nil {
					line, err = br.ReadString('\n')
				}
			} else {
				time.Sleep(20 * time.Millisecond)
			}
			if _, err := conn.Write([]byte(c.body)); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(b) != c.member || resp.Header.Get("X-Got") != c.got {
				t.Fatalf("answer %q, member got %q; want %q, %q", b, resp.Header.Get("X-Got"), c.member, c.got)
			}
		})
	}
}
