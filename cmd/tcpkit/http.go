package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// httpMain runs a labelled HTTP server: every request is answered with
// "<label> xff=<X-Forwarded-For> cookie=<Cookie> <method> <path>", so a
// client can see which member served it and what the proxy inserted.
func httpMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("http", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "", "address:port to listen on")
	label := fs.String("label", "W1", "label put in every answer")
	verbose := fs.Bool("v", false, "log every request")
	setCookie := fs.String("set-cookie", "", "a Set-Cookie value sent with every answer (name=value; attributes), as the application's own cookie")
	sum := fs.Bool("sum", false, "also answer with the request body's length and SHA-256 (bytes=<n> sha256=<hex>), so a client can see an upload arrived whole")
	bodyFile := fs.String("body", "", "answer every request with this file's content (text/html) instead of the label line, as a web application's page")
	chunked := fs.Bool("chunked", false, "with -body, send the page chunked (in parts of 1000 bytes, no Content-Length)")
	ctype := fs.String("type", "text/html", "with -body, the page's Content-Type")
	echoHeader := fs.String("echo-header", "", "also answer with the value of this request header (NAME=value), so a client can see what the proxy passed on")
	h2c := fs.Bool("h2c", false, "also speak HTTP/2 in cleartext with prior knowledge, and say in every answer which protocol asked (proto=HTTP/2.0), as an HTTP/2 member")
	peer := fs.Bool("peer", false, "also answer with the address the request came from (from=<addr>), so a client can see the proxy's source address translation")
	peerPort := fs.Bool("peer-port", false, "with -peer, the port too (from=<addr>:<port>), so a client can see whether the proxy kept its source port")
	statuses := fs.Bool("statuses", false, "answer a request for /status/NNN with status NNN (and the label line), as an application failing with that status")
	trailer := fs.String("trailer", "", "end every answer with this trailer (NAME=value, declared and sent chunked), as a gRPC member's grpc-status")
	useTLS := fs.Bool("tls", false, "serve over TLS with a self-signed certificate made at start, offering -alpn, and say in every answer which protocol asked (proto=HTTP/2.0), as an HTTPS member")
	alpn := fs.String("alpn", "h2,http/1.1", "with -tls, the protocols offered in ALPN, comma-separated (http/1.1 alone: a member that does not speak HTTP/2)")
	settings := fs.Bool("settings", false, "with -h2c, also answer with the HTTP/2 settings the client's connection began with (settings=NAME=value,...; CONN_WINDOW is its connection window), as a member showing what a proxy asks of it")
	delay := fs.Duration("delay", 0, "answer every request this long after it arrived (-v logs it on arrival), as a slow application")
	statusFile := fs.String("status-file", "", "answer every request with the HTTP status written in this file, read at each request (200 while it is missing or holds no status), as an application a test turns unhealthy and back")
	conns := fs.Bool("conns", false, "log each connection as it opens and ends (conn new from <addr>, conn closed from <addr> after <n>s, whole seconds), so a client can see a proxy open and close its server connections")
	resetMid := fs.Int("reset-mid", 0, "answer every request with the head of a body of this many bytes and half of the body, then reset the connection (SO_LINGER 0), as a member failing in the middle of a response")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *listen == "" {
		return errors.New("http needs -listen")
	}
	if *resetMid < 0 {
		return errors.New("-reset-mid takes a body size in bytes")
	}
	var page []byte
	if *bodyFile != "" {
		var err error
		if page, err = os.ReadFile(*bodyFile); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	log := &lockedWriter{w: stdout}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := sha256.New()
		n, _ := io.Copy(h, r.Body)
		answer := fmt.Sprintf("%s xff=%s cookie=%s %s %s", *label, r.Header.Get("X-Forwarded-For"),
			r.Header.Get("Cookie"), r.Method, r.URL.Path)
		if *sum {
			answer += fmt.Sprintf(" bytes=%d sha256=%x", n, h.Sum(nil))
		}
		if *echoHeader != "" {
			answer += fmt.Sprintf(" %s=%s", *echoHeader, r.Header.Get(*echoHeader))
		}
		if *h2c || *useTLS {
			answer += " proto=" + r.Proto
		}
		if *settings {
			answer += " settings=" + settingsOf(r.Context())
		}
		if *peer {
			host, _, _ := net.SplitHostPort(r.RemoteAddr)
			if *peerPort {
				host = r.RemoteAddr
			}
			answer += " from=" + host
		}
		if *verbose {
			log.printf("%s from %s\n", answer, r.RemoteAddr)
		}
		if *delay > 0 {
			select {
			case <-time.After(*delay):
			case <-r.Context().Done():
			}
		}
		if *setCookie != "" {
			w.Header().Add("Set-Cookie", *setCookie)
		}
		name, value, hasTrailer := strings.Cut(*trailer, "=")
		if hasTrailer {
			w.Header().Set("Trailer", name)
			defer w.Header().Set(name, value)
		}
		if *statusFile != "" {
			if b, err := os.ReadFile(*statusFile); err == nil {
				if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n >= 200 && n <= 599 {
					w.WriteHeader(n)
				}
			}
		}
		if code, ok := strings.CutPrefix(r.URL.Path, "/status/"); ok && *statuses {
			if n, err := strconv.Atoi(code); err == nil && n >= 200 && n <= 599 {
				w.WriteHeader(n)
			}
		}
		if *resetMid > 0 {
			resetMidway(w, *resetMid)
			return
		}
		if page != nil {
			writePage(w, page, *ctype, *chunked)
			return
		}
		fmt.Fprintln(w, answer)
	})}
	if *h2c {
		var p http.Protocols
		p.SetHTTP1(true)
		p.SetUnencryptedHTTP2(true)
		srv.Protocols = &p
	}
	if *settings {
		if !*h2c {
			return errors.New("-settings needs -h2c")
		}
		ln = settingsListener{ln}
		srv.ConnContext = settingsContext
	}
	if *useTLS {
		cert, err := selfSignedCert()
		if err != nil {
			return err
		}
		var p http.Protocols
		for _, a := range strings.Split(*alpn, ",") {
			switch strings.TrimSpace(a) {
			case "h2":
				p.SetHTTP2(true)
			case "http/1.1":
				p.SetHTTP1(true)
			default:
				return fmt.Errorf("-alpn: %q is neither h2 nor http/1.1", a)
			}
		}
		srv.Protocols = &p
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
		if p.HTTP2() {
			srv.TLSConfig.NextProtos = append(srv.TLSConfig.NextProtos, "h2")
		}
		if p.HTTP1() {
			srv.TLSConfig.NextProtos = append(srv.TLSConfig.NextProtos, "http/1.1")
		}
		ln = tls.NewListener(ln, srv.TLSConfig)
	}
	if *conns {
		srv.ConnState = connLogger(log)
	}
	log.printf("%s listening on %s (http)\n", *label, ln.Addr())
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// selfSignedCert is a certificate for an HTTPS member whose clients do
// not verify it (the monitors and server-ssl profiles by default), made
// at start so that no key is kept on disk.
func selfSignedCert() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "tcpkit member"},
		DNSNames: []string{"member.example"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// resetMidway announces a body of n bytes, sends half of it and resets
// the connection: what a proxy's client then gets is the proxy's doing.
func resetMidway(w http.ResponseWriter, n int) {
	w.Header().Set("Content-Length", strconv.Itoa(n))
	w.Write(bytes.Repeat([]byte("x"), n/2))
	rc := http.NewResponseController(w)
	rc.Flush()
	// The half leaves before the reset, which would otherwise overtake
	// it in the proxy's receive queue.
	time.Sleep(50 * time.Millisecond)
	c, _, err := rc.Hijack()
	if err != nil {
		return
	}
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Close()
}

// writePage answers with page, of Content-Type ctype, with its
// Content-Length or chunked in parts of 1000 bytes (each flushed, so each
// is a chunk of its own).
func writePage(w http.ResponseWriter, page []byte, ctype string, chunked bool) {
	w.Header().Set("Content-Type", ctype)
	if !chunked {
		w.Header().Set("Content-Length", strconv.Itoa(len(page)))
		w.Write(page)
		return
	}
	f, _ := w.(http.Flusher)
	for len(page) > 0 {
		n := min(len(page), 1000)
		w.Write(page[:n])
		if f != nil {
			f.Flush()
		}
		page = page[n:]
	}
}

// gatewayMain is the seed 003/004 SSL gateway: many users' requests
// multiplexed over a few reused keep-alive connections, all from one
// address. With -cookies each user keeps the cookies it was given, as a
// browser behind the gateway would. It prints which member answered each
// user's requests and the totals per member.
func gatewayMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gateway", flag.ContinueOnError)
	fs.SetOutput(stderr)
	connect := fs.String("connect", "", "virtual server address:port")
	users := fs.Int("users", 6, "users behind the gateway")
	requests := fs.Int("requests", 4, "requests per user")
	conns := fs.Int("conns", 1, "server connections the gateway reuses for all users")
	cookies := fs.Bool("cookies", false, "each user sends back the cookies it was given")
	session := fs.Bool("session", false, "each user also sends its own session cookie (session=u<N>), as a browser logged in to the site does")
	xffIn := fs.String("xff", "", "the gateway inserts X-Forwarded-For with this address: the one it sees every user from (a NAT's)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *connect == "" || *users < 1 || *requests < 1 || *conns < 1 || *users > 10000 || *requests > 10000 || *conns > 100 {
		return errors.New("gateway needs -connect, and -users, -requests, -conns between 1 and 10000 (conns 100)")
	}
	type link struct {
		c  net.Conn
		br *bufio.Reader
	}
	var d net.Dialer
	links := make([]link, *conns)
	for i := range links {
		c, err := d.DialContext(ctx, "tcp", *connect)
		if err != nil {
			return err
		}
		defer c.Close()
		links[i] = link{c, bufio.NewReader(c)}
	}
	jars := make([]map[string]string, *users)
	served := make([][]string, *users)
	xff := make([]string, *users)
	total := map[string]int{}
	n := 0
	// Users take turns, as concurrent users' requests interleave on the
	// gateway's connections.
	for r := 0; r < *requests; r++ {
		for u := 0; u < *users; u++ {
			l := links[n%len(links)]
			n++
			req := fmt.Sprintf("GET /user%d/%d HTTP/1.1\r\nHost: www\r\nX-User: %d\r\n", u+1, r+1, u+1)
			if *xffIn != "" {
				req += "X-Forwarded-For: " + *xffIn + "\r\n"
			}
			var kv []string
			if *cookies {
				for k, v := range jars[u] {
					kv = append(kv, k+"="+v)
				}
			}
			if *session {
				kv = append(kv, fmt.Sprintf("session=u%d", u+1))
			}
			if len(kv) > 0 {
				sort.Strings(kv)
				req += "Cookie: " + strings.Join(kv, "; ") + "\r\n"
			}
			if _, err := io.WriteString(l.c, req+"\r\n"); err != nil {
				return err
			}
			resp, err := http.ReadResponse(l.br, nil)
			if err != nil {
				return fmt.Errorf("user %d request %d: %w", u+1, r+1, err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				return err
			}
			for _, c := range resp.Cookies() {
				if jars[u] == nil {
					jars[u] = map[string]string{}
				}
				jars[u][c.Name] = c.Value
			}
			f := strings.Fields(string(body))
			if len(f) < 2 {
				return fmt.Errorf("user %d: unexpected answer %q", u+1, body)
			}
			served[u] = append(served[u], f[0])
			xff[u] = strings.TrimPrefix(f[1], "xff=")
			total[f[0]]++
		}
	}
	for u := range served {
		fmt.Fprintf(stdout, "user %d: %s (X-Forwarded-For seen: %s)\n", u+1, strings.Join(served[u], " "), xff[u])
	}
	var labels []string
	for k := range total {
		labels = append(labels, k)
	}
	sort.Strings(labels)
	for _, k := range labels {
		fmt.Fprintf(stdout, "member %s: %d requests\n", k, total[k])
	}
	return nil
}

// connLogger is an http.Server's ConnState that logs each connection's
// opening and its end, with how long it lasted in whole seconds.
func connLogger(log *lockedWriter) func(net.Conn, http.ConnState) {
	var opened sync.Map // net.Conn -> time.Time
	return func(c net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			opened.Store(c, time.Now())
			log.printf("conn new from %s\n", c.RemoteAddr())
		case http.StateClosed, http.StateHijacked:
			if at, ok := opened.LoadAndDelete(c); ok {
				log.printf("conn closed from %s after %ds\n", c.RemoteAddr(), int(time.Since(at.(time.Time)).Seconds()))
			}
		}
	}
}
