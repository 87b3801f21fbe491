package httpx

import (
	"bytes"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// frameAll feeds s to a framer in pieces of step bytes, as reads would
// deliver it, and returns the messages it cut.
func frameAll(fr interface {
	Frame([]byte) (int, bool, error)
}, s string, step int) ([]string, error) {
	var out []string
	var buf []byte
	for i := 0; i < len(s) || len(buf) > 0; {
		if i < len(s) {
			j := min(i+step, len(s))
			buf = append(buf, s[i:j]...)
			i = j
		}
		progressed := false
		for len(buf) > 0 {
			n, ok, err := fr.Frame(buf)
			if err != nil {
				return out, err
			}
			if !ok {
				break
			}
			out = append(out, string(buf[:n]))
			buf = buf[n:]
			progressed = true
		}
		if i >= len(s) && !progressed {
			break
		}
	}
	return out, nil
}

func TestRequestFraming(t *testing.T) {
	get := "GET / HTTP/1.1\r\nHost: a\r\n\r\n"
	post := "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello"
	chunked := "POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n0\r\nTrailer: x\r\n\r\n"
	lf := "GET /lf HTTP/1.0\nHost: a\n\n"
	tests := []struct {
		name string
		in   string
		want []string
		err  error
	}{
		{"get", get, []string{get}, nil},
		{"pipelined", get + post + chunked + get, []string{get, post, chunked, get}, nil},
		{"bare LF", lf + get, []string{lf, get}, nil},
		{"garbage", "\x16\x03\x01\x02\x00\r\n", nil, ErrBadMessage},
		{"no version", "GET /\r\n\r\n", nil, ErrBadMessage},
		{"HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", nil, ErrBadMessage},
		{"CL and TE", "POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", nil, ErrBadMessage},
		{"two lengths", "POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", nil, ErrBadMessage},
		{"bad length", "POST / HTTP/1.1\r\nContent-Length: -3\r\n\r\n", nil, ErrBadMessage},
		{"folded header", "GET / HTTP/1.1\r\nX: a\r\n b\r\n\r\n", nil, ErrBadMessage},
		{"space before colon", "GET / HTTP/1.1\r\nHost : a\r\n\r\n", nil, ErrBadMessage},
		{"bad chunk size", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", nil, ErrBadMessage},
		{"chunk without CRLF", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\naXY0\r\n\r\n", nil, ErrBadMessage},
		{"header too large", "GET / HTTP/1.1\r\nX: " + strings.Repeat("a", 200) + "\r\n\r\n", nil, ErrHeaderTooLarge},
		{"body too large", "POST / HTTP/1.1\r\nContent-Length: 5000\r\n\r\n", nil, ErrBodyTooLarge},
		{"three fields", "GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", []string{"GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n"}, nil},
		{"too many fields", "GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n\r\n", nil, ErrTooManyHeaders},
	}
	for _, tc := range tests {
		for _, step := range []int{1, 7, 1 << 20} {
			fr := &RequestFramer{MaxHeader: 128, Max: 1024, MaxFields: 3}
			got, err := frameAll(fr, tc.in, step)
			if !errors.Is(err, tc.err) {
				t.Errorf("%s/step %d: err %v, want %v", tc.name, step, err, tc.err)
				continue
			}
			if tc.err == nil && strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("%s/step %d: got %q, want %q", tc.name, step, got, tc.want)
			}
		}
	}
}

func TestRequestLast(t *testing.T) {
	fr := &RequestFramer{}
	in := "HEAD /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"
	n, ok, err := fr.Frame([]byte(in))
	if err != nil || !ok || n != len(in) {
		t.Fatalf("Frame = %d %v %v", n, ok, err)
	}
	h := fr.Last()
	if !h.IsHead() || h.Minor != 0 || h.WantsClose() {
		t.Fatalf("head %+v", h)
	}
}

// TestRequestFacts: the facts a proxy acts on beyond framing.
func TestRequestFacts(t *testing.T) {
	tests := []struct {
		in                    string
		upgrade, expect, conn bool
		fields                int
	}{
		{"GET /ws HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: keep-alive, Upgrade\r\n\r\n", true, false, false, 3},
		{"GET /ws HTTP/1.1\r\nUpgrade: websocket\r\n\r\n", false, false, false, 1},
		{"GET /ws HTTP/1.1\r\nConnection: upgrade\r\n\r\n", false, false, false, 1},
		{"PUT /f HTTP/1.1\r\nExpect: 100-Continue\r\nContent-Length: 3\r\n\r\n", false, true, false, 2},
		{"CONNECT db:5432 HTTP/1.1\r\nHost: db:5432\r\n\r\n", false, false, true, 1},
	}
	for _, tc := range tests {
		h, err := ParseRequest([]byte(tc.in))
		if err != nil {
			t.Fatalf("%q: %v", tc.in, err)
		}
		if h.Upgrade != tc.upgrade || h.ExpectContinue != tc.expect || h.IsConnect() != tc.conn || h.Fields != tc.fields {
			t.Errorf("%q: upgrade %v expect %v connect %v fields %d", tc.in, h.Upgrade, h.ExpectContinue, h.IsConnect(), h.Fields)
		}
	}
	// A request waiting for its body says so, with its Expect.
	fr := &RequestFramer{}
	in := []byte("PUT /f HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n")
	if _, ok, err := fr.Frame(in); ok || err != nil {
		t.Fatalf("Frame = %v %v", ok, err)
	}
	if w := fr.Waiting(); w == nil || !w.ExpectContinue {
		t.Fatalf("Waiting = %+v", w)
	}
	if _, ok, _ := fr.Frame(append(in, "abc"...)); !ok || fr.Waiting() != nil {
		t.Fatalf("complete request still waiting")
	}
}

func TestResponseFraming(t *testing.T) {
	ok200 := "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"
	chunked := "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n"
	noContent := "HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n"
	notMod := "HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n"
	interim := "HTTP/1.1 100 Continue\r\n\r\n" + ok200
	headResp := "HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n"
	established := "HTTP/1.1 200 Connection Established\r\n\r\n"
	switching := "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
	refused := "HTTP/1.1 403 Forbidden\r\nContent-Length: 2\r\n\r\nno"
	tests := []struct {
		name    string
		in      string
		head    bool
		connect bool
		want    []string
		close   bool // the last response waits for the close
		err     error
	}{
		{"length", ok200 + ok200, false, false, []string{ok200, ok200}, false, nil},
		{"chunked", chunked + ok200, false, false, []string{chunked, ok200}, false, nil},
		{"204 and 304 bodiless", noContent + notMod, false, false, []string{noContent, notMod}, false, nil},
		{"100 continue travels with its answer", interim, false, false, []string{interim}, false, nil},
		{"HEAD", headResp + headResp, true, false, []string{headResp, headResp}, false, nil},
		{"CONNECT 2xx is bodiless", established + "tun", false, true, []string{established}, false, nil},
		{"CONNECT refused has its body", refused, false, true, []string{refused}, false, nil},
		{"101 is bodiless", switching + "frames", false, false, []string{switching}, false, nil},
		{"until close", "HTTP/1.0 200 OK\r\n\r\nbody", false, false, nil, true, nil},
		{"garbage", "SSH-2.0-OpenSSH_9\r\n\r\n", false, false, nil, false, ErrBadMessage},
	}
	for _, tc := range tests {
		for _, step := range []int{1, 5, 1 << 20} {
			fr := &ResponseFramer{Max: 1024, HeadRequest: func() (bool, bool) { return tc.head, tc.connect }}
			got, err := frameAll(fr, tc.in, step)
			if !errors.Is(err, tc.err) {
				t.Errorf("%s/step %d: err %v, want %v", tc.name, step, err, tc.err)
				continue
			}
			if tc.err != nil {
				continue
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("%s/step %d: got %q, want %q", tc.name, step, got, tc.want)
			}
			if tc.close {
				if n, ok := fr.Finish([]byte(tc.in)); !ok || n != len(tc.in) || !fr.Closing() {
					t.Errorf("%s: Finish = %d %v", tc.name, n, ok)
				}
			}
		}
	}
}

func TestMemberEncoding(t *testing.T) {
	tests := []struct {
		member string
		enc    string
	}{
		{"10.1.1.100:80", "1677787402.20480.0000"},
		{"10.1.1.100:8080", "1677787402.36895.0000"},
		{"10.1.1.100:443", "1677787402.47873.0000"},
		{"127.0.120.21:8080", "360185983.36895.0000"},
		{"[2001:db8::1]:80", "vi20010db8000000000000000000000001.20480"},
	}
	for _, tc := range tests {
		m := netip.MustParseAddrPort(tc.member)
		if got := EncodeMember(m); got != tc.enc {
			t.Errorf("EncodeMember(%s) = %s, want %s", tc.member, got, tc.enc)
		}
		back, ok := DecodeMember([]byte(tc.enc))
		if !ok || back != m {
			t.Errorf("DecodeMember(%s) = %v %v", tc.enc, back, ok)
		}
	}
	rd, ok := DecodeMember([]byte("rd5o00000000000000000000ffffc0000201o80"))
	if !ok || rd != netip.MustParseAddrPort("192.0.2.1:80") {
		t.Errorf("route domain form: %v %v", rd, ok)
	}
	for _, bad := range []string{"", "1.2", "abc.def.0000", "1.2.3", "vi12.80", "rd1o12o80", "99999999999.1.0000"} {
		if _, ok := DecodeMember([]byte(bad)); ok {
			t.Errorf("DecodeMember(%q) accepted", bad)
		}
	}
}

func TestEdits(t *testing.T) {
	req := "GET / HTTP/1.0\r\nHost: a\r\nConnection: close\r\nCookie: a=1; BIGipServerp=1677787402.20480.0000\r\n\r\n"
	h, err := ParseRequest([]byte(req))
	if err != nil {
		t.Fatal(err)
	}
	got := string(AppendRequest(nil, []byte(req), &h, RequestEdits{XFF: netip.MustParseAddr("10.0.0.9"), Transform: true}))
	want := "GET / HTTP/1.0\r\nHost: a\r\nX-Cnection: close\r\nCookie: a=1; BIGipServerp=1677787402.20480.0000\r\nX-Forwarded-For: 10.0.0.9\r\nConnection: Keep-Alive\r\n\r\n"
	if got != want {
		t.Errorf("AppendRequest:\n%q\nwant\n%q", got, want)
	}
	if len(got)-len(req) > MaxRequestGrowth {
		t.Errorf("growth %d above MaxRequestGrowth", len(got)-len(req))
	}
	v, ok := Cookie([]byte(req), &h, "BIGipServerp")
	if !ok || string(v) != "1677787402.20480.0000" {
		t.Errorf("Cookie = %q %v", v, ok)
	}
	if _, ok := Cookie([]byte(req), &h, "BIGipServerq"); ok {
		t.Error("Cookie found a cookie that is not there")
	}

	resp := "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"
	rh, _ := ParseResponse([]byte(resp))
	spec := CookieSpec{Name: PoolCookieName("/Common/web_pool"), HTTPOnly: true, Secure: true}
	line := spec.AppendSetCookie(nil, netip.MustParseAddrPort("10.1.1.100:80"), time.Time{})
	out := string(AppendResponse(nil, []byte(resp), &rh, line))
	wantResp := "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nSet-Cookie: BIGipServerweb_pool=1677787402.20480.0000; path=/; Httponly; Secure\r\n\r\nhi"
	if out != wantResp {
		t.Errorf("AppendResponse:\n%q\nwant\n%q", out, wantResp)
	}
	spec.Expiration = time.Hour
	spec.HTTPOnly, spec.Secure = false, false
	exp := string(spec.AppendSetCookie(nil, netip.MustParseAddrPort("10.1.1.100:80"), time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)))
	if !strings.Contains(exp, "; expires=Tue, 02-Jan-2024 04:04:05 GMT\r\n") {
		t.Errorf("expiring cookie: %q", exp)
	}
	if PoolCookieName("/Part/p") != "BIGipServer~Part~p" {
		t.Errorf("PoolCookieName(/Part/p) = %s", PoolCookieName("/Part/p"))
	}
}

// FuzzRequestFramer checks that any input either frames into messages
// that reassemble the input's prefix, whatever the read sizes, or fails;
// it never panics or loops.
func FuzzRequestFramer(f *testing.F) {
	f.Add("GET / HTTP/1.1\r\nHost: a\r\n\r\n", 3)
	f.Add("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", 1)
	f.Add("POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc", 2)
	f.Fuzz(func(t *testing.T, in string, step int) {
		if step <= 0 || step > 64 {
			step = 1
		}
		whole, errW := frameAll(&RequestFramer{Max: 4096}, in, 1<<20)
		parts, errP := frameAll(&RequestFramer{Max: 4096}, in, step)
		if (errW == nil) != (errP == nil) && len(in) < 4096 {
			t.Fatalf("read size changed the verdict: %v vs %v", errW, errP)
		}
		if errW == nil && errP == nil && strings.Join(whole, "") != strings.Join(parts, "") {
			t.Fatalf("read size changed the messages")
		}
		if !strings.HasPrefix(in, strings.Join(whole, "")) {
			t.Fatalf("messages are not a prefix of the input")
		}
		for _, m := range whole {
			h, err := ParseRequest([]byte(m))
			if err != nil {
				t.Fatalf("framed message does not parse: %v", err)
			}
			out := AppendRequest(nil, []byte(m), &h, RequestEdits{XFF: netip.MustParseAddr("10.0.0.1"), Transform: true})
			if !bytes.HasSuffix(out, []byte(m[blankLine([]byte(m), h.HeaderEnd):])) {
				t.Fatalf("edit lost the body")
			}
		}
	})
}

// FuzzResponseFramer is the same for responses.
func FuzzResponseFramer(f *testing.F) {
	f.Add("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi", 3, false)
	f.Add("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 1, false)
	f.Fuzz(func(t *testing.T, in string, step int, head bool) {
		if step <= 0 || step > 64 {
			step = 1
		}
		hr := func() (bool, bool) { return head, false }
		whole, errW := frameAll(&ResponseFramer{Max: 4096, HeadRequest: hr}, in, 1<<20)
		parts, errP := frameAll(&ResponseFramer{Max: 4096, HeadRequest: hr}, in, step)
		if errW == nil && errP == nil && strings.Join(whole, "") != strings.Join(parts, "") {
			t.Fatalf("read size changed the messages")
		}
		if !strings.HasPrefix(in, strings.Join(whole, "")) {
			t.Fatalf("messages are not a prefix of the input")
		}
	})
}

// TestEditedHeads: a head an iRule rewrote replaces the original, the
// body follows unchanged, and the profile's edits and the persistence
// cookie are added to the new head; interim responses stay before it.
func TestEditedHeads(t *testing.T) {
	body := "abc"
	orig := "POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\n" + body
	edited := "POST /b HTTP/1.1\r\nHost: b\r\nContent-Length: 3\r\nConnection: close\r\n\r\n"
	oh, _ := ParseRequest([]byte(orig))
	eh, err := ParseRequest([]byte(edited))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		got  string
		want string
	}{
		{"request unchanged", string(AppendRequestHead(nil, []byte(orig[:oh.HeaderEnd]), []byte(body), &oh, RequestEdits{})), orig},
		{"request edited, XFF and transformations",
			string(AppendRequestHead(nil, []byte(edited), []byte(body), &eh, RequestEdits{XFF: netip.MustParseAddr("10.0.0.9"), Transform: true})),
			"POST /b HTTP/1.1\r\nHost: b\r\nContent-Length: 3\r\nX-Cnection: close\r\nX-Forwarded-For: 10.0.0.9\r\n\r\n" + body},
		{"response edited with a cookie",
			func() string {
				resp := "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nX-Member: w1\r\nContent-Length: 2\r\n\r\nhi"
				var rf ResponseFramer
				n, ok, err := rf.Frame([]byte(resp))
				if err != nil || !ok || n != len(resp) {
					t.Fatalf("framing: %d %v %v", n, ok, err)
				}
				h := rf.Last()
				b := []byte(resp)
				return string(AppendResponseHead(nil, b[:h.Start], []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n"), []byte("Set-Cookie: c=1\r\n"), b[h.HeaderEnd:]))
			}(),
			"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\nSet-Cookie: c=1\r\n\r\nhi"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s:\n%q\nwant\n%q", tc.name, tc.got, tc.want)
		}
	}
}

func TestSetContentLength(t *testing.T) {
	head := "POST /u HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nX: 1\r\n\r\n"
	got := string(SetContentLength(nil, []byte(head), 12))
	want := "POST /u HTTP/1.1\r\nHost: a\r\nX: 1\r\nContent-Length: 12\r\n\r\n"
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if h, err := ParseRequest([]byte(got)); err != nil || h.ContentLength != 12 || h.Chunked {
		t.Fatalf("re-framed head parses as %+v, %v", h, err)
	}
}

func TestForwardedFor(t *testing.T) {
	for _, tc := range []struct {
		req   string
		names []string
		want  string
	}{
		{"GET / HTTP/1.1\r\nX-Forwarded-For: 10.1.1.1, 192.0.2.7\r\n\r\n", nil, "10.1.1.1"},
		{"GET / HTTP/1.1\r\nX-Forwarded-For: [2001:db8::1]:443\r\n\r\n", nil, "2001:db8::1"},
		{"GET / HTTP/1.1\r\nX-Forwarded-For: unknown\r\n\r\n", nil, "invalid IP"},
		{"GET / HTTP/1.1\r\nX-Forwarded-For: 10.1.1.1\r\nTrue-Client-IP: 10.9.9.9\r\n\r\n", []string{"true-client-ip", "x-forwarded-for"}, "10.9.9.9"},
		{"GET / HTTP/1.1\r\nX-Forwarded-For: 10.1.1.1\r\n\r\n", []string{"true-client-ip"}, "invalid IP"},
	} {
		h, err := ParseRequest([]byte(tc.req))
		if err != nil {
			t.Fatal(err)
		}
		if got := ForwardedFor([]byte(tc.req), &h, tc.names).String(); got != tc.want {
			t.Errorf("%q %v: %s, want %s", tc.req, tc.names, got, tc.want)
		}
	}
}

func TestRewriteRedirect(t *testing.T) {
	vs := netip.MustParseAddrPort("192.0.2.10:8080")
	node := netip.MustParseAddr("10.0.0.5")
	head := func(loc string) string {
		return "HTTP/1.1 302 Found\r\nLocation: " + loc + "\r\nContent-Length: 0\r\n\r\n"
	}
	for _, tc := range []struct {
		mode   RedirectRewrite
		scheme string
		loc    string
		want   string // "" unchanged
	}{
		{RewriteAll, "https", "http://www.example.com/a?b", "https://www.example.com/a?b"},
		{RewriteAll, "https", "http://www.example.com:80/a", "https://www.example.com/a"},
		{RewriteAll, "https", "/relative", ""},
		{RewriteMatching, "https", "http://www.example.com/a", "https://www.example.com/a"},
		{RewriteMatching, "https", "http://other.example.com/a", ""},
		{RewriteNodes, "http", "http://10.0.0.5:8000/login", "http://192.0.2.10:8080/login"},
		{RewriteNodes, "http", "http://www.example.com/login", ""},
		{RewriteNone, "https", "http://www.example.com/a", ""},
	} {
		got, ok := RewriteRedirect([]byte(head(tc.loc)), RedirectContext{Mode: tc.mode, Scheme: tc.scheme, Host: "www.example.com:8080", Virtual: vs, Node: node})
		if tc.want == "" {
			if ok {
				t.Errorf("%v %s: rewritten to %q", tc.mode, tc.loc, got)
			}
			continue
		}
		if !ok || string(got) != head(tc.want) {
			t.Errorf("%v %s: %q, want Location %s", tc.mode, tc.loc, got, tc.want)
		}
	}
}

func TestDechunk(t *testing.T) {
	got, err := Dechunk(nil, []byte("5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nTrailer: x\r\n\r\n"))
	if err != nil || string(got) != "hello world" {
		t.Fatalf("Dechunk = %q %v", got, err)
	}
	if _, err := Dechunk(nil, []byte("5\r\nhel")); err == nil {
		t.Fatal("a cut chunk was accepted")
	}
}

// streamAll is frameAll for a streaming response framer: a message over
// its Max is cut as head then body parts, and comes back whole, marked
// with a leading "~" when it was streamed.
func streamAll(fr *ResponseFramer, s string, step int) ([]string, error) {
	var out []string
	var buf []byte
	var cur []byte // the streamed message so far
	streaming := false
	for i := 0; i < len(s); {
		j := min(i+step, len(s))
		buf = append(buf, s[i:j]...)
		i = j
		for len(buf) > 0 {
			if streaming {
				n, done, err := fr.Body(buf)
				if err != nil {
					return out, err
				}
				cur = append(cur, buf[:n]...)
				buf = buf[n:]
				if !done {
					break
				}
				out = append(out, "~"+string(cur))
				streaming, cur = false, nil
				continue
			}
			n, ok, err := fr.Frame(buf)
			if err == ErrStreamBody {
				h := fr.Streaming()
				cur = append(cur[:0], buf[:h.HeaderEnd]...)
				buf = buf[h.HeaderEnd:]
				streaming = true
				continue
			}
			if err != nil {
				return out, err
			}
			if !ok {
				break
			}
			out = append(out, string(buf[:n]))
			buf = buf[n:]
		}
	}
	if streaming {
		if n, ok := fr.Finish(buf); ok {
			out = append(out, "~"+string(cur)+string(buf[:n]))
		}
	}
	return out, nil
}

// TestResponseStreaming: a body over Max is cut as it arrives, at any
// read size, and ends exactly where a whole-message framer would have
// ended it, so the next response frames as usual.
func TestResponseStreaming(t *testing.T) {
	body := strings.Repeat("0123456789abcdef", 10) // 160 bytes
	small := "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"
	length := "HTTP/1.1 200 OK\r\nContent-Length: 160\r\n\r\n" + body
	chunked := "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
		"50;ext=1\r\n" + body[:80] + "\r\n" + "A0\r\n" + body + body[:0] + "\r\n" + "1\n" + "x\n" +
		"0\r\nTrailer: t\r\n\r\n"
	interim := "HTTP/1.1 100 Continue\r\n\r\n" + length
	untilClose := "HTTP/1.0 200 OK\r\n\r\n" + body
	tests := []struct {
		name string
		in   string
		want []string
		err  error
	}{
		{"length", length + small, []string{"~" + length, small}, nil},
		{"chunked", chunked + small, []string{"~" + chunked, small}, nil},
		{"small stays whole", small + small, []string{small, small}, nil},
		{"interim travels with the head", interim + small, []string{"~" + interim, small}, nil},
		{"until close", untilClose, []string{"~" + untilClose}, nil},
		{"bad chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + "A0\r\n" + body + "\r\nzz\r\n", nil, ErrBadMessage},
		{"chunk without its line end", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + "A0\r\n" + body + "xx0\r\n\r\n", nil, ErrBadMessage},
	}
	for _, tc := range tests {
		for _, step := range []int{1, 7, 64, 1 << 20} {
			fr := &ResponseFramer{Max: 100, Stream: true}
			got, err := streamAll(fr, tc.in, step)
			if !errors.Is(err, tc.err) {
				t.Errorf("%s/step %d: err %v, want %v", tc.name, step, err, tc.err)
				continue
			}
			if tc.err != nil {
				continue
			}
			want := strings.Join(tc.want, "|")
			if step == 1<<20 && strings.HasPrefix(tc.name, "length") || strings.HasPrefix(tc.name, "interim") && step == 1<<20 {
				// A message over Max that arrived whole in one read is
				// handed over whole: there is nothing to stream.
				want = strings.TrimPrefix(want, "~")
			}
			if strings.Join(got, "|") != want {
				t.Errorf("%s/step %d: got %q, want %q", tc.name, step, got, want)
			}
		}
	}
	// Without Stream the limit still fails the message.
	if _, err := frameAll(&ResponseFramer{Max: 100}, length, 1<<20); !errors.Is(err, ErrBodyTooLarge) {
		t.Errorf("without Stream: err %v, want ErrBodyTooLarge", err)
	}
}

// FuzzResponseStreaming: streaming a body cuts messages where the
// whole-message framer does, whatever the input and read size.
func FuzzResponseStreaming(f *testing.F) {
	f.Add("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n20\r\n0123456789abcdef0123456789abcdef\r\n0\r\nT: 1\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n", 3)
	f.Add("HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n0123456789abcdef0123456789abcdef01234567", 1)
	f.Fuzz(func(t *testing.T, in string, step int) {
		if step <= 0 || step > 64 {
			step = 1
		}
		whole, errW := frameAll(&ResponseFramer{}, in, 1<<20)
		parts, errP := streamAll(&ResponseFramer{Max: 16, Stream: true}, in, step)
		if errW != nil || errP != nil {
			return
		}
		for i := range parts {
			parts[i] = strings.TrimPrefix(parts[i], "~")
		}
		if len(parts) < len(whole) || strings.Join(parts[:len(whole)], "|") != strings.Join(whole, "|") {
			t.Fatalf("streaming cut %q, whole messages %q", parts, whole)
		}
	})
}
