package transcripts

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf16"

	"github.com/Azure/go-ntlmssp"
	"github.com/rogpeppe/go-internal/testscript"
)

// memberConn is what an httpmember knows of one connection: its number,
// the requests it carried and the user its NTLM handshake authenticated.
type memberConn struct {
	id   int64
	reqs atomic.Int64
	mu   sync.Mutex
	user string
}

type memberConnKey struct{}

// httpmember ADDR NAME: run an HTTP member until the script ends. Each
// answer is one line, "NAME conn=C req=R xff=X fast=F": the number of
// the connection it came over (1, 2, ... in the order they were
// accepted), the request's number on that connection, its
// X-Forwarded-For and X-Fast fields. Under /ntlm the member
// authenticates each connection with an NTLM-like three-leg handshake
// (a 401 asking for NTLM, the negotiate message answered by a 401 with
// a challenge, the authenticate message whose user name it takes), and
// a connection so authenticated serves every later request as that
// user: "NAME conn=C user=U", as an IIS server does; an unauthenticated
// request there gets the 401, without a body, its connection's number
// in X-Conn.
func cmdHTTPMember(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: httpmember ADDR NAME")
	}
	ln, err := net.Listen("tcp", args[0])
	if err != nil {
		ts.Fatalf("httpmember: %v", err)
	}
	name := args[1]
	var conns atomic.Int64
	srv := &http.Server{
		ReadHeaderTimeout: 30 * time.Second,
		ConnContext: func(ctx context.Context, _ net.Conn) context.Context {
			return context.WithValue(ctx, memberConnKey{}, &memberConn{id: conns.Add(1)})
		},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mc := r.Context().Value(memberConnKey{}).(*memberConn)
			n := mc.reqs.Add(1)
			if strings.HasPrefix(r.URL.Path, "/ntlm") {
				ntlmLeg(w, r, name, mc)
				return
			}
			fmt.Fprintf(w, "%s conn=%d req=%d xff=%s fast=%s\n", name, mc.id, n, r.Header.Get("X-Forwarded-For"), r.Header.Get("X-Fast"))
		}),
	}
	go srv.Serve(ln)
	ts.Defer(func() { srv.Close() })
}

// ntlmLeg is one leg of the member's handshake on connection mc.
func ntlmLeg(w http.ResponseWriter, r *http.Request, name string, mc *memberConn) {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	auth := r.Header.Get("Authorization")
	scheme, token, _ := strings.Cut(auth, " ")
	if auth == "" || !strings.EqualFold(scheme, "NTLM") {
		if mc.user != "" {
			fmt.Fprintf(w, "%s conn=%d user=%s\n", name, mc.id, mc.user)
			return
		}
		// (No body: the client's connection is free again at once.)
		w.Header().Set("WWW-Authenticate", "NTLM")
		w.Header().Set("X-Conn", fmt.Sprint(mc.id))
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	msg, err := base64.StdEncoding.DecodeString(token)
	if err != nil || len(msg) < 12 || string(msg[:8]) != "NTLMSSP\x00" {
		http.Error(w, "bad NTLM message", http.StatusBadRequest)
		return
	}
	switch binary.LittleEndian.Uint32(msg[8:12]) {
	case 1: // negotiate: the challenge
		w.Header().Set("WWW-Authenticate", "NTLM "+base64.StdEncoding.EncodeToString(ntlmChallenge()))
		w.WriteHeader(http.StatusUnauthorized)
	case 3: // authenticate: the user name (UTF-16LE, its field at 36)
		if len(msg) < 44 {
			http.Error(w, "short NTLM message", http.StatusBadRequest)
			return
		}
		l, off := int(binary.LittleEndian.Uint16(msg[36:])), int(binary.LittleEndian.Uint32(msg[40:]))
		if off+l > len(msg) || l%2 != 0 {
			http.Error(w, "bad user name field", http.StatusBadRequest)
			return
		}
		u := make([]uint16, l/2)
		for i := range u {
			u[i] = binary.LittleEndian.Uint16(msg[off+2*i:])
		}
		mc.user = string(utf16.Decode(u))
		fmt.Fprintf(w, "%s conn=%d user=%s\n", name, mc.id, mc.user)
	default:
		http.Error(w, "unexpected NTLM message", http.StatusBadRequest)
	}
}

// ntlmChallenge is a CHALLENGE_MESSAGE (MS-NLMP 2.2.1.2): Unicode, a
// fixed server challenge and an empty target information list.
func ntlmChallenge() []byte {
	b := make([]byte, 52)
	copy(b, "NTLMSSP\x00")
	binary.LittleEndian.PutUint32(b[8:], 2)
	binary.LittleEndian.PutUint32(b[16:], 48)         // target name: empty, at the end
	binary.LittleEndian.PutUint32(b[20:], 0x00800201) // unicode, NTLM, target info
	copy(b[24:32], "chllnge!")
	binary.LittleEndian.PutUint16(b[40:], 4) // target info: MsvAvEOL
	binary.LittleEndian.PutUint16(b[42:], 4)
	binary.LittleEndian.PutUint32(b[44:], 48)
	return b
}

var (
	ntlmClientsMu sync.Mutex
	ntlmClients   = map[*testscript.TestScript]map[string]*http.Client{}
)

// ntlmclient NAME URL USER PASSWORD: GET URL as USER with NTLM
// authentication (github.com/Azure/go-ntlmssp over net/http) and print
// the answer's status and body. The client named NAME keeps its
// connection between commands, as a browser does, until the script
// ends: a later ntlmclient of the same NAME comes over the same client
// connection.
func cmdNTLMClient(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 4 {
		ts.Fatalf("usage: ntlmclient NAME URL USER PASSWORD")
	}
	ntlmClientsMu.Lock()
	m := ntlmClients[ts]
	if m == nil {
		m = map[string]*http.Client{}
		ntlmClients[ts] = m
		ts.Defer(func() {
			ntlmClientsMu.Lock()
			defer ntlmClientsMu.Unlock()
			for _, c := range ntlmClients[ts] {
				c.CloseIdleConnections()
			}
			delete(ntlmClients, ts)
		})
	}
	c := m[args[0]]
	if c == nil {
		c = &http.Client{Timeout: 20 * time.Second, Transport: ntlmssp.Negotiator{RoundTripper: &http.Transport{MaxConnsPerHost: 1}}}
		m[args[0]] = c
	}
	ntlmClientsMu.Unlock()
	req, err := http.NewRequest("GET", args[1], nil)
	ts.Check(err)
	req.SetBasicAuth(args[2], args[3])
	resp, err := c.Do(req)
	if err != nil {
		if neg {
			return
		}
		ts.Fatalf("ntlmclient: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	ts.Check(err)
	fmt.Fprintf(ts.Stdout(), "%d %s", resp.StatusCode, body)
	if ok := resp.StatusCode == http.StatusOK; ok == neg {
		ts.Fatalf("ntlmclient: status %d", resp.StatusCode)
	}
}
