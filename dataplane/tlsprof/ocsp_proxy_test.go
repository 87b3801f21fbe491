package tlsprof

import (
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestOCSPProxyServerPool: a validator with a proxy-server-pool reaches
// its responder through the pool's HTTP proxies, whose own resolver knows
// the responder's name (the system's does not), plain HTTP by absolute
// URL and HTTPS-style tunnels by CONNECT alike; a member that refuses
// connections is passed over for the next; no member, or none that
// answers, fails the exchange saying so.
func TestOCSPProxyServerPool(t *testing.T) {
	p := newOCSPPKI(t)
	good := p.server(t, "good", "V")
	r := p.responder(t, "127.36.40.1:0")
	_, port, _ := net.SplitHostPort(r.Addr())
	var forwarded, tunnelled atomic.Int32
	proxy := startHTTPProxy(t, "127.36.40.2:0", map[string]string{"ocsp.openltm.test": "127.36.40.1"}, &forwarded, &tunnelled)
	dead := netip.MustParseAddrPort(closedAddr(t, "127.36.40.3"))
	for _, tc := range []struct {
		name      string
		members   []netip.AddrPort
		url       string
		wantErr   string
		forwarded int32 // requests the proxy forwarded by absolute URL
	}{
		{"through the proxy", []netip.AddrPort{proxy}, "http://ocsp.openltm.test:" + port, "", 1},
		{"first member refuses, the next answers", []netip.AddrPort{dead, proxy}, "http://ocsp.openltm.test:" + port, "", 1},
		{"no member available", nil, "http://ocsp.openltm.test:" + port, "proxy-server-pool /Common/proxies: no member available", 0},
		{"no member answers", []netip.AddrPort{dead}, "http://ocsp.openltm.test:" + port, "proxy-server-pool /Common/proxies", 0},
		{"a name the proxy does not know", []netip.AddrPort{proxy}, "http://nowhere.openltm.test:" + port, "502", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forwarded.Store(0)
			members := tc.members
			o := &OCSP{Name: "/Common/v", ResponderURL: tc.url, Timeout: 3 * time.Second,
				Proxies: func() []netip.AddrPort { return members }, ProxyPool: "/Common/proxies"}
			a := o.fetch(t.Context(), good.Cert.Certs[0], p.ca, time.Now)
			if tc.wantErr == "" {
				if a.err != nil || a.status != OCSPGood {
					t.Fatalf("status %q, err %v", a.status, a.err)
				}
			} else if a.err == nil || !strings.Contains(a.err.Error(), tc.wantErr) {
				t.Fatalf("err %v, want %q", a.err, tc.wantErr)
			}
			if n := forwarded.Load(); n != tc.forwarded {
				t.Fatalf("the proxy forwarded %d requests, want %d", n, tc.forwarded)
			}
		})
	}
	// The same validator without the pool cannot resolve the name.
	o := &OCSP{Name: "/Common/v", ResponderURL: "http://ocsp.openltm.test:" + port, Timeout: 3 * time.Second}
	if a := o.fetch(t.Context(), good.Cert.Certs[0], p.ca, time.Now); a.err == nil {
		t.Fatalf("reached the responder without the proxy: %q", a.status)
	}
	// A responder over TLS is reached through a CONNECT tunnel: the
	// tunnel is opened (the handshake then fails, openssl's responder
	// speaking plain HTTP).
	o = &OCSP{Name: "/Common/v", ResponderURL: "https://ocsp.openltm.test:" + port, Timeout: 3 * time.Second,
		Proxies: func() []netip.AddrPort { return []netip.AddrPort{proxy} }, ProxyPool: "/Common/proxies"}
	o.fetch(t.Context(), good.Cert.Certs[0], p.ca, time.Now)
	if tunnelled.Load() != 1 {
		t.Fatalf("%d CONNECT tunnels, want 1", tunnelled.Load())
	}
}

// startHTTPProxy runs a forward HTTP proxy at addr (absolute-URL requests
// and CONNECT), resolving host names through hosts only, and counts what
// it forwarded and tunnelled.
func startHTTPProxy(t *testing.T, addr string, hosts map[string]string, forwarded, tunnelled *atomic.Int32) netip.AddrPort {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	resolve := func(hostport string) (string, bool) {
		h, port, err := net.SplitHostPort(hostport)
		if err != nil || hosts[h] == "" {
			return "", false
		}
		return net.JoinHostPort(hosts[h], port), true
	}
	tr := &http.Transport{Proxy: nil, DisableKeepAlives: true}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		to, ok := resolve(r.Host)
		if !ok && r.Method != http.MethodConnect {
			to, ok = resolve(r.URL.Host + ":80")
		}
		if !ok {
			http.Error(w, "unknown host", http.StatusBadGateway)
			return
		}
		if r.Method == http.MethodConnect {
			tunnelled.Add(1)
			up, err := net.DialTimeout("tcp", to, 2*time.Second)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			defer up.Close()
			w.WriteHeader(http.StatusOK)
			c, rw, err := http.NewResponseController(w).Hijack()
			if err != nil {
				return
			}
			defer c.Close()
			rw.Flush()
			c.SetDeadline(time.Now().Add(5 * time.Second))
			up.SetDeadline(time.Now().Add(5 * time.Second))
			go io.Copy(up, c)
			io.Copy(c, up)
			return
		}
		if !r.URL.IsAbs() {
			http.Error(w, "not a proxy request", http.StatusBadRequest)
			return
		}
		forwarded.Add(1)
		out := r.Clone(r.Context())
		out.RequestURI = ""
		out.URL.Host = to
		resp, err := tr.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return netip.MustParseAddrPort(ln.Addr().String())
}
