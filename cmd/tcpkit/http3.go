package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/openltm/openltm/dataplane/http3/earlyclient"
	"github.com/quic-go/quic-go/http3"
)

// headerFlags collects repeated -H 'Name: value' flags, as curl's.
type headerFlags []string

func (h *headerFlags) String() string     { return strings.Join(*h, ", ") }
func (h *headerFlags) Set(v string) error { *h = append(*h, v); return nil }

// http3Main is a curl-like HTTP/3 client (the machine's curl may have no
// HTTP/3): it asks URL over QUIC -n times, each on a connection of its
// own unless -reuse, and prints each answer's status line and body
// (with -i, its fields too), so a transcript sees what an HTTP/3 virtual
// answered.
func http3Main(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("http3", flag.ContinueOnError)
	fs.SetOutput(stderr)
	insecure := fs.Bool("k", false, "do not check the server's certificate (curl's -k)")
	caFile := fs.String("cacert", "", "check the server's certificate against this PEM file's certificates")
	serverName := fs.String("servername", "", "the TLS server name to send and check (else the URL's host), for a URL that names the address")
	include := fs.Bool("i", false, "print the answer's fields (sorted by name) after its status line")
	method := fs.String("X", "GET", "the request's method")
	data := fs.String("d", "", "send this as the request's body")
	count := fs.Int("n", 1, "ask this many times")
	reuse := fs.Bool("reuse", false, "ask every time over one QUIC connection (else a new connection each time, as separate curl runs)")
	timeout := fs.Duration("timeout", 5*time.Second, "give up on a request after this long")
	pause := fs.Duration("pause", 0, "wait this long between requests (with -reuse, to let the connection idle)")
	zeroRTT := fs.Bool("0rtt", false, "send the -n requests (no body) in 0-RTT: a first connection gets a session ticket, a second resumes with it and sends them before its handshake ends (held until an answer, or -hold); prints whether the server took the 0-RTT")
	hold := fs.Duration("hold", 2*time.Second, "with -0rtt, the longest the client's end of the handshake waits for an early answer")
	var headers headerFlags
	fs.Var(&headers, "H", "add a request field 'Name: value' (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("http3 needs one URL (https://ADDR:PORT/path)")
	}
	url := fs.Arg(0)
	tc := &tls.Config{InsecureSkipVerify: *insecure, ServerName: *serverName}
	if *caFile != "" {
		pem, err := os.ReadFile(*caFile)
		if err != nil {
			return err
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return fmt.Errorf("%s holds no PEM certificate", *caFile)
		}
	}
	if *zeroRTT {
		return http3Early(ctx, url, tc, *method, headers, *count, *include, *hold, *timeout, stdout)
	}
	var tr *http3.Transport
	for i := 0; i < *count; i++ {
		if i > 0 && *pause > 0 {
			time.Sleep(*pause)
		}
		if tr == nil || !*reuse {
			if tr != nil {
				tr.Close()
			}
			tr = &http3.Transport{TLSClientConfig: tc.Clone()}
		}
		var body io.Reader
		if *data != "" {
			body = strings.NewReader(*data)
		}
		rctx, cancel := context.WithTimeout(ctx, *timeout)
		req, err := http.NewRequestWithContext(rctx, *method, url, body)
		if err != nil {
			cancel()
			tr.Close()
			return err
		}
		for _, h := range headers {
			name, value, ok := strings.Cut(h, ":")
			if !ok {
				cancel()
				tr.Close()
				return fmt.Errorf("-H %q is not 'Name: value'", h)
			}
			req.Header.Add(strings.TrimSpace(name), strings.TrimSpace(value))
		}
		resp, err := tr.RoundTrip(req)
		if err != nil {
			cancel()
			tr.Close()
			return err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		if err != nil {
			tr.Close()
			return err
		}
		printAnswer(stdout, resp, b, *include)
	}
	if tr != nil {
		tr.Close()
	}
	return nil
}

// printAnswer prints an answer's status line, its fields with -i, and
// its body.
func printAnswer(stdout io.Writer, resp *http.Response, b []byte, include bool) {
	fmt.Fprintf(stdout, "%s %d\n", resp.Proto, resp.StatusCode)
	if include {
		names := make([]string, 0, len(resp.Header))
		for k := range resp.Header {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			for _, v := range resp.Header[k] {
				fmt.Fprintf(stdout, "%s: %s\n", k, v)
			}
		}
	}
	out := string(b)
	if out != "" && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	io.WriteString(stdout, out)
}

// http3Early asks url n times in 0-RTT (earlyclient) and prints "0-RTT
// accepted" or "0-RTT not used", then each answer, or the error of a
// request that got none (a server refusing the 0-RTT loses what was
// sent in it).
func http3Early(ctx context.Context, url string, tc *tls.Config, method string, headers headerFlags, n int, include bool, hold, timeout time.Duration, stdout io.Writer) error {
	u, err := neturl.Parse(url)
	if err != nil {
		return err
	}
	tc = tc.Clone()
	tc.NextProtos = []string{http3.NextProtoH3}
	if tc.ServerName == "" {
		tc.ServerName = u.Hostname()
	}
	reqs := make([]*http.Request, n)
	for i := range reqs {
		req, err := http.NewRequestWithContext(ctx, method, url, nil)
		if err != nil {
			return err
		}
		for _, h := range headers {
			name, value, ok := strings.Cut(h, ":")
			if !ok {
				return fmt.Errorf("-H %q is not 'Name: value'", h)
			}
			req.Header.Add(strings.TrimSpace(name), strings.TrimSpace(value))
		}
		reqs[i] = req
	}
	rctx, cancel := context.WithTimeout(ctx, timeout+hold+5*time.Second)
	defer cancel()
	res, err := earlyclient.Do(rctx, u.Host, tc, reqs, hold)
	if err != nil {
		return err
	}
	if res.Used0RTT {
		fmt.Fprintln(stdout, "0-RTT accepted")
	} else {
		fmt.Fprintln(stdout, "0-RTT not used")
	}
	for _, a := range res.Answers {
		if a.Err != nil {
			fmt.Fprintf(stdout, "error: %v\n", a.Err)
			continue
		}
		printAnswer(stdout, a.Resp, a.Body, include)
	}
	return nil
}
