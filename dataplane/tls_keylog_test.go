package dataplane

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/tlsprof"
)

// keyLogRule logs, in CLIENTSSL_HANDSHAKE and SERVERSSL_HANDSHAKE, the
// side's NSS key-log lines as BIG-IP's documented rule does (TLS 1.3's
// four secrets, or TLS 1.2's master secret), then its SNI and ALPN.
const keyLogRule = `
proc keys {} {
    if { [SSL::cipher version] eq "TLSv1.3" } {
        return [list \
            "CLIENT_HANDSHAKE_TRAFFIC_SECRET [SSL::clientrandom] [SSL::tls13_secret client hs]" \
            "SERVER_HANDSHAKE_TRAFFIC_SECRET [SSL::clientrandom] [SSL::tls13_secret server hs]" \
            "CLIENT_TRAFFIC_SECRET_0 [SSL::clientrandom] [SSL::tls13_secret client app]" \
            "SERVER_TRAFFIC_SECRET_0 [SSL::clientrandom] [SSL::tls13_secret server app]"]
    }
    return [list "CLIENT_RANDOM [SSL::clientrandom] [SSL::sessionsecret]"]
}
when CLIENTSSL_HANDSHAKE {
    foreach l [call keys] { log local0. $l }
    log local0. "sni=[SSL::sni name] alpn=[SSL::alpn]"
}
when SERVERSSL_HANDSHAKE {
    foreach l [call keys] { log local0. $l }
    log local0. "sni=[SSL::sni name]"
}`

// syncBuf is a key log written by one connection's handshake and read by
// the test.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// lines are the key-log lines written, sorted.
func (s *syncBuf) lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := strings.Split(strings.TrimSpace(s.b.String()), "\n")
	slices.Sort(out)
	return out
}

// ruleLines are the lines the rules logged in event ev, in order: those
// starting with a key-log label (sorted), and the others.
func ruleLines(lg *ruleLog, ev string) (keys []string, other []string) {
	for _, l := range lg.Lines() {
		_, text, ok := strings.Cut(l, "<"+ev+">: ")
		if !ok {
			continue
		}
		if strings.Contains(text, "SECRET") || strings.HasPrefix(text, "CLIENT_RANDOM") {
			keys = append(keys, text)
		} else {
			other = append(other, text)
		}
	}
	slices.Sort(keys)
	return keys, other
}

// startKeyLogMember is a TLS line member on addr (up to TLS version max)
// writing its key log to kl and the server name each client asked for
// to sni.
func startKeyLogMember(t *testing.T, addr string, max uint16, kl io.Writer, sni *syncBuf) {
	t.Helper()
	mcert, mkey, _ := testCert(t, "member.example")
	pair, _ := tlsprof.Pair("member", mcert, mkey, nil)
	cfg := &tls.Config{Certificates: []tls.Certificate{pair}, MaxVersion: max, KeyLogWriter: kl,
		GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
			fmt.Fprintf(sni, "%s\n", h.ServerName)
			return nil, nil
		}}
	ln, err := tls.Listen("tcp", addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	serveOn(t, ln, func(c net.Conn) {
		r := bufio.NewReader(c)
		for i := 0; i < 1000; i++ { // (a test sends a few lines)
			if _, err := r.ReadString('\n'); err != nil {
				return
			}
			io.WriteString(c, "M Response tls\n")
		}
	})
}

// TestTLSRuleKeyLogStandard: on a standard virtual with client-ssl and
// server-ssl, a rule's key-log lines for each side are the ones the peer
// of that side wrote for the same connection (the client's
// tls.Config.KeyLogWriter, the member's), TLS 1.2 and 1.3: the secrets
// decrypt what the peers sent. SSL::sni names the client's server name on
// the client side and the name the member received on the server side;
// SSL::alpn the protocol agreed with an h2/http1.1 client.
func TestTLSRuleKeyLogStandard(t *testing.T) {
	cert, key, roots := testCert(t, "app.example")
	for i, tc := range []struct {
		name      string
		version   uint16
		protos    []string
		wantALPN  string
		wantLines int
	}{
		{"TLS1.2 h2", tls.VersionTLS12, []string{"h2", "http/1.1"}, "h2", 1},
		{"TLS1.3 http1.1", tls.VersionTLS13, []string{"http/1.1"}, "http/1.1", 4},
		{"TLS1.3 no ALPN", tls.VersionTLS13, nil, "", 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := fmt.Sprintf("127.0.245.%d:443", 10+2*i)
			member := fmt.Sprintf("127.0.245.%d:9443", 11+2*i)
			var memberKeys, memberSNI, clientKeys syncBuf
			startKeyLogMember(t, member, tc.version, &memberKeys, &memberSNI)
			p, _ := newPlane(t)
			cfg := basic(vs, member)
			// CLIENTSSL_CLIENTHELLO: the hello's random and server name;
			// no secret yet.
			rs, lg := compileRules(t, keyLogRule+`
when CLIENTSSL_CLIENTHELLO { log local0. "sni=[SSL::sni name] random=[SSL::clientrandom] secret=<[SSL::sessionsecret]> alpn=<[SSL::alpn]>" }`)
			lg.showOnFailure(t)
			cfg.Virtuals["/Common/vs"].Rules = rs
			cfg.Virtuals["/Common/vs"].TLS = clientSSL(t, cert, key)
			cfg.Virtuals["/Common/vs"].TLS.Client = tlsprof.WithALPN(cfg.Virtuals["/Common/vs"].TLS.Client, "h2", "http/1.1")
			cfg.Virtuals["/Common/vs"].TLS.Server = serverSSL(t)
			cfg.Virtuals["/Common/vs"].TLS.ServerUseSNI = true
			mustApply(t, p, cfg)

			c, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", vs, &tls.Config{ServerName: "app.example", RootCAs: roots,
				MaxVersion: tc.version, NextProtos: tc.protos, KeyLogWriter: &clientKeys})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(5 * time.Second))
			io.WriteString(c, "x\n")
			if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || line != "M Response tls\n" {
				t.Fatalf("answer %q %v", line, err)
			}

			keys, other := ruleLines(lg, "CLIENTSSL_HANDSHAKE")
			if want := clientKeys.lines(); len(want) != tc.wantLines || !slices.Equal(keys, want) {
				t.Fatalf("client side: the rule's key log\n%s\nthe client's\n%s", strings.Join(keys, "\n"), strings.Join(want, "\n"))
			}
			if want := []string{"sni=app.example alpn=" + tc.wantALPN}; !slices.Equal(other, want) {
				t.Fatalf("client side: %q, want %q", other, want)
			}
			random := strings.Fields(clientKeys.lines()[0])[1]
			if _, hello := ruleLines(lg, "CLIENTSSL_CLIENTHELLO"); !slices.Equal(hello, []string{"sni=app.example random=" + random + " secret=<> alpn=<>"}) {
				t.Fatalf("CLIENTSSL_CLIENTHELLO: %q, the client's random %s", hello, random)
			}
			// The server side's lines name the proxy's own hello: the
			// member's key log for the same connection holds them.
			keys, other = ruleLines(lg, "SERVERSSL_HANDSHAKE")
			if want := memberKeys.lines(); len(want) != tc.wantLines || !slices.Equal(keys, want) {
				t.Fatalf("server side: the rule's key log\n%s\nthe member's\n%s", strings.Join(keys, "\n"), strings.Join(want, "\n"))
			}
			if got := strings.TrimSpace(memberSNI.b.String()); !slices.Equal(other, []string{"sni=" + got}) || got != "app.example" {
				t.Fatalf("server side: %q, the member was sent %q", other, got)
			}
		})
	}
}

// TestTLSRuleKeyLogHTTP: the same on an HTTP virtual re-encrypting to a
// TLS member (its client's front stage runs on a goroutine), the rule's
// lines read again in HTTP_REQUEST, where the client side's TLS is the
// connection's.
func TestTLSRuleKeyLogHTTP(t *testing.T) {
	cert, key, roots := testCert(t, "www.example")
	for i, version := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		t.Run(tlsprof.VersionName(version), func(t *testing.T) {
			vs := fmt.Sprintf("127.0.245.%d:443", 20+2*i)
			member := fmt.Sprintf("127.0.245.%d:443", 21+2*i)
			var memberKeys, memberSNI, clientKeys syncBuf
			startKeyLogHTTPMember(t, member, version, &memberKeys, &memberSNI)
			p, _ := newPlane(t)
			cfg := mblbConfig(vs, &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, member)
			rs, lg := compileRules(t, keyLogRule+keyLogHTTPRule)
			lg.showOnFailure(t)
			cfg.Virtuals["/Common/vs"].Rules = rs
			cfg.Virtuals["/Common/vs"].TLS = clientSSL(t, cert, key)
			cfg.Virtuals["/Common/vs"].TLS.Client = tlsprof.WithALPN(cfg.Virtuals["/Common/vs"].TLS.Client, "http/1.1")
			cfg.Virtuals["/Common/vs"].TLS.Server = serverSSL(t)
			mustApply(t, p, cfg)
			resp := keyLogRequest(t, vs, version, roots, &clientKeys, nil)
			checkKeyLogAnswer(t, resp, &clientKeys, "www.example/http/1.1")
			keys, _ := ruleLines(lg, "CLIENTSSL_HANDSHAKE")
			if want := clientKeys.lines(); !slices.Equal(keys, want) {
				t.Fatalf("CLIENTSSL_HANDSHAKE's key log\n%s\nthe client's\n%s", strings.Join(keys, "\n"), strings.Join(want, "\n"))
			}
			// The member's connection: its key log, and no SNI sent (the
			// server-ssl profile names none).
			keys, other := ruleLines(lg, "SERVERSSL_HANDSHAKE")
			if want := memberKeys.lines(); !slices.Equal(keys, want) {
				t.Fatalf("SERVERSSL_HANDSHAKE's key log\n%s\nthe member's\n%s", strings.Join(keys, "\n"), strings.Join(want, "\n"))
			}
			if got := strings.TrimSpace(memberSNI.b.String()); !slices.Equal(other, []string{"sni=" + got}) {
				t.Fatalf("server side: %q, the member was sent %q", other, got)
			}
		})
	}
}

// keyLogHTTPRule reads the client side's key log, SNI and ALPN in
// HTTP_REQUEST and gives them to the client in headers of the answer.
const keyLogHTTPRule = `
when HTTP_REQUEST { set k [join [call keys] |]; set tail "[SSL::sni name]/[SSL::alpn]" }
when HTTP_RESPONSE { HTTP::header insert X-Keys $k; HTTP::header insert X-Tail $tail }`

// startKeyLogHTTPMember serves HTTP over TLS on addr as
// startKeyLogMember serves lines.
func startKeyLogHTTPMember(t *testing.T, addr string, max uint16, kl io.Writer, sni *syncBuf) {
	t.Helper()
	mcert, mkey, _ := testCert(t, "member.example")
	pair, _ := tlsprof.Pair("member", mcert, mkey, nil)
	ln, err := tls.Listen("tcp", addr, &tls.Config{Certificates: []tls.Certificate{pair}, MaxVersion: max, KeyLogWriter: kl,
		GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
			fmt.Fprintf(sni, "%s\n", h.ServerName)
			return nil, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	serveOn(t, ln, func(c net.Conn) {
		br := bufio.NewReader(c)
		for i := 0; i < 1000; i++ { // (a test sends a few requests)
			if _, err := readHTTPRequestHead(br); err != nil {
				return
			}
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		}
	})
}

// readHTTPRequestHead reads a request's head (the requests here have no
// body).
func readHTTPRequestHead(br *bufio.Reader) (string, error) {
	var sb strings.Builder
	for i := 0; i < 100; i++ {
		l, err := br.ReadString('\n')
		if err != nil {
			return "", err
		}
		sb.WriteString(l)
		if l == "\r\n" {
			return sb.String(), nil
		}
	}
	return "", fmt.Errorf("request head too long")
}

// keyLogRequest sends one request over a TLS connection of the given
// version offering h2 and http/1.1 (the virtual, offering http/1.1 only,
// agrees on it) and returns the answer; during, when not nil, runs before
// the connection is closed.
func keyLogRequest(t *testing.T, vs string, version uint16, roots *x509.CertPool, kl io.Writer, during func()) *http.Response {
	t.Helper()
	tc := &tls.Config{ServerName: "www.example", RootCAs: roots, MaxVersion: version, KeyLogWriter: kl, NextProtos: []string{"h2", "http/1.1"}}
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", vs, tc)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rc := &httpRuleClient{c: c, br: bufio.NewReader(c)}
	resp, _, err := rc.do(httpReq("www.example", "/"))
	if err != nil {
		t.Fatal(err)
	}
	if during != nil {
		during()
	}
	return resp
}

// checkKeyLogAnswer checks the key-log lines HTTP_REQUEST read (X-Keys)
// against the client's key log, and its SNI and ALPN (X-Tail).
func checkKeyLogAnswer(t *testing.T, resp *http.Response, clientKeys *syncBuf, tail string) {
	t.Helper()
	keys := strings.Split(resp.Header.Get("X-Keys"), "|")
	slices.Sort(keys)
	if want := clientKeys.lines(); !slices.Equal(keys, want) {
		t.Fatalf("HTTP_REQUEST's key log\n%s\nthe client's\n%s", strings.Join(keys, "\n"), strings.Join(want, "\n"))
	}
	if got := resp.Header.Get("X-Tail"); got != tail {
		t.Fatalf("SNI and ALPN: %q, want %q", got, tail)
	}
}
