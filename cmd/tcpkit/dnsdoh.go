package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/doh"
)

// serveDoH is tcpkit dns -doh: h's answers over DNS over HTTPS on
// listen, in TLS with certFile and keyFile (ALPN h2 and http/1.1, only
// http/1.1 with http1), else in cleartext (HTTP/1.1, and HTTP/2 with
// prior knowledge), until ctx ends.
func serveDoH(ctx context.Context, listen, label, certFile, keyFile string, http1 bool, n int, h dns.Handler, stdout io.Writer) error {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	var proto http.Protocols
	proto.SetHTTP1(true)
	mode := "cleartext"
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			ln.Close()
			return err
		}
		alpn := []string{"h2", "http/1.1"}
		if http1 {
			alpn = alpn[1:]
		}
		proto.SetHTTP2(!http1)
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: alpn})
		mode = "TLS"
	} else {
		proto.SetUnencryptedHTTP2(true)
	}
	st := new(doh.Stats)
	srv := &http.Server{Protocols: &proto, ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Each request's answer is logged with the HTTP version it came
		// over, as a DNS query's is with its network.
		dh := &doh.Handler{Stats: st, Answer: func(q *dns.Msg, _ []byte) (*dns.Msg, int) {
			rw := &dohWriter{proto: r.Proto}
			h.ServeDNS(rw, q)
			if rw.m == nil {
				return nil, http.StatusServiceUnavailable
			}
			return rw.m, http.StatusOK
		}}
		dh.ServeHTTP(w, r)
	})}
	errs := make(chan error, 1)
	go func() { errs <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, "%s answering %d records on %s (DNS over HTTPS, %s)\n", label, n, listen, mode)
	select {
	case <-ctx.Done():
	case err := <-errs:
		return err
	}
	sctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	srv.Shutdown(sctx)
	srv.Close()
	return nil
}

// dohWriter is a dns.ResponseWriter that keeps the answer for the HTTP
// response; its remote address's network is the HTTP version, for the
// query log.
type dohWriter struct {
	proto string
	m     *dns.Msg
}

func (w *dohWriter) LocalAddr() net.Addr       { return dohAddr(w.proto) }
func (w *dohWriter) RemoteAddr() net.Addr      { return dohAddr(w.proto) }
func (w *dohWriter) WriteMsg(m *dns.Msg) error { w.m = m; return nil }
func (w *dohWriter) Write([]byte) (int, error) { return 0, fmt.Errorf("DoH answers are messages") }
func (w *dohWriter) Close() error              { return nil }
func (w *dohWriter) TsigStatus() error         { return nil }
func (w *dohWriter) TsigTimersOnly(bool)       {}
func (w *dohWriter) Hijack()                   {}

type dohAddr string

func (a dohAddr) Network() string { return string(a) }
func (a dohAddr) String() string  { return string(a) }
