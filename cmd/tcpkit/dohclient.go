package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"os"
	"strings"
	"time"

	"github.com/miekg/dns"
)

const dohClientUsage = "-url http(s)://ADDR:PORT/dns-query [-post] [-http1] [-k] [-cacert FILE] [-timeout D] NAME TYPE [NAME TYPE ...]"

// dohClientMain is tcpkit doh-client: the queries given, one after the
// other over one connection (HTTP/2: ALPN h2 under TLS, prior knowledge
// in cleartext; HTTP/1.1 with -http1), each answer printed as dig +short
// prints it. It is what dig +https +keepopen does, without dig 9.18's
// stall on a server whose SETTINGS frame arrives before its first
// request goes out; and a line per query says whether it reused the
// connection, which a test of per-connection behaviour needs.
func dohClientMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("doh-client", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", "", "the DoH endpoint")
	post := fs.Bool("post", false, "POST each query (application/dns-message) instead of GET ?dns=")
	http1 := fs.Bool("http1", false, "HTTP/1.1 with keep-alive instead of HTTP/2")
	insecure := fs.Bool("k", false, "do not verify the server's certificate")
	cacert := fs.String("cacert", "", "PEM file of the CAs to trust")
	timeout := fs.Duration("timeout", 5*time.Second, "bound on each query")
	fs.Usage = func() { fmt.Fprintln(stderr, "usage: tcpkit doh-client", dohClientUsage); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		return err
	}
	qs := fs.Args()
	if *url == "" || len(qs) == 0 || len(qs)%2 != 0 {
		fs.Usage()
		return errors.New("doh-client needs -url and NAME TYPE pairs")
	}
	types := make([]uint16, 0, len(qs)/2)
	for i := 1; i < len(qs); i += 2 {
		t, ok := dns.StringToType[strings.ToUpper(qs[i])]
		if !ok {
			return fmt.Errorf("%s: not a DNS type", qs[i])
		}
		types = append(types, t)
	}
	tr := &http.Transport{MaxConnsPerHost: 1, TLSClientConfig: &tls.Config{InsecureSkipVerify: *insecure}}
	if *cacert != "" {
		pem, err := os.ReadFile(*cacert)
		if err != nil {
			return err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("%s: no PEM certificate", *cacert)
		}
		tr.TLSClientConfig.RootCAs = pool
	}
	var proto http.Protocols
	if *http1 {
		proto.SetHTTP1(true)
	} else if strings.HasPrefix(*url, "https:") {
		proto.SetHTTP2(true)
	} else {
		proto.SetUnencryptedHTTP2(true)
	}
	tr.Protocols = &proto
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	for i := 0; i < len(qs); i += 2 {
		q := new(dns.Msg)
		q.SetQuestion(dns.Fqdn(qs[i]), types[i/2])
		q.Id = 0 // RFC 8484 4.1: 0 for cache friendliness
		ans, proto, reused, err := askDoHOnce(ctx, client, *url, q, *post, *timeout)
		if err != nil {
			return fmt.Errorf("%s %s: %w", qs[i], qs[i+1], err)
		}
		conn := "new connection"
		if reused {
			conn = "reused connection"
		}
		fmt.Fprintf(stdout, ";; %s %s: %s, %s, %s\n", qs[i], qs[i+1], dns.RcodeToString[ans.Rcode], proto, conn)
		for _, rr := range ans.Answer {
			fmt.Fprintln(stdout, strings.TrimPrefix(rr.String(), rr.Header().String()))
		}
	}
	return nil
}

// askDoHOnce sends q and reads its answer, saying whether the request
// went over (its HTTP version, and whether an earlier request had opened
// the connection).
func askDoHOnce(ctx context.Context, client *http.Client, url string, q *dns.Msg, post bool, timeout time.Duration) (ans *dns.Msg, proto string, reused bool, err error) {
	wire, err := q.Pack()
	if err != nil {
		return nil, "", false, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }})
	var req *http.Request
	if post {
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(wire))
		if err == nil {
			req.Header.Set("Content-Type", "application/dns-message")
		}
	} else {
		sep := "?"
		if strings.Contains(url, "?") {
			sep = "&"
		}
		req, err = http.NewRequestWithContext(ctx, http.MethodGet, url+sep+"dns="+base64.RawURLEncoding.EncodeToString(wire), nil)
	}
	if err != nil {
		return nil, "", false, err
	}
	req.Header.Set("Accept", "application/dns-message")
	resp, err := client.Do(req)
	if err != nil {
		return nil, "", reused, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 65535))
	if err != nil {
		return nil, resp.Proto, reused, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, resp.Proto, reused, fmt.Errorf("HTTP status %s", resp.Status)
	}
	ans = new(dns.Msg)
	if err := ans.Unpack(body); err != nil {
		return nil, resp.Proto, reused, fmt.Errorf("answer: %w", err)
	}
	return ans, resp.Proto, reused, nil
}
