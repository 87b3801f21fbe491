package main

import (
	"bufio"
	"context"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"strings"
	"time"

	"github.com/miekg/dns"
	"github.com/openltm/openltm/dataplane/gslb"
)

// echServerMain is a TLS member that takes Encrypted Client Hello: it
// holds the HPKE private key (-key, the PEM a gtm SVCB/HTTPS member's
// hpke-key names) and the ECH config built from it for -public-name, as
// the DNS answer announces it, and tells each client which name it saw
// and whether the hello came encrypted.
func echServerMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("ech-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "", "address:port to serve TLS on")
	keyFile := fs.String("key", "", "the HPKE private key, PEM (X25519 or a P-curve)")
	public := fs.String("public-name", "", "the ECH config's public_name (the SVCB/HTTPS target)")
	label := fs.String("label", "E1", "the label each answer starts with")
	certOut := fs.String("cert-out", "", "write the server's self-signed certificate (for the public name) here, PEM, for ech-client -cacert")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *listen == "" || *keyFile == "" || *public == "" {
		return errors.New("ech-server needs -listen, -key and -public-name")
	}
	data, err := os.ReadFile(*keyFile)
	if err != nil {
		return err
	}
	priv, err := hpkePrivate(data)
	if err != nil {
		return fmt.Errorf("%s: %v", *keyFile, err)
	}
	list, err := gslb.ECHConfigList(priv.PublicKey(), *public)
	if err != nil {
		return err
	}
	cert, err := selfSignedFor(*public)
	if err != nil {
		return err
	}
	if *certOut != "" {
		if err := os.WriteFile(*certOut, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}), 0o644); err != nil {
			return err
		}
	}
	ln, err := tls.Listen("tcp", *listen, &tls.Config{
		Certificates:             []tls.Certificate{cert},
		MinVersion:               tls.VersionTLS13,
		EncryptedClientHelloKeys: []tls.EncryptedClientHelloKey{{Config: list[2:], PrivateKey: priv.Bytes(), SendAsRetry: true}},
	})
	if err != nil {
		return err
	}
	go func() { <-ctx.Done(); ln.Close() }()
	fmt.Fprintf(stdout, "%s listening on %s\n", *label, ln.Addr())
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		go func() {
			defer c.Close()
			c.SetDeadline(time.Now().Add(10 * time.Second))
			tc := c.(*tls.Conn)
			if err := tc.Handshake(); err != nil {
				fmt.Fprintf(stdout, "%s handshake from %s: %v\n", *label, c.RemoteAddr(), err)
				return
			}
			st := tc.ConnectionState()
			how := "clear hello"
			if st.ECHAccepted {
				how = "ECH accepted"
			}
			fmt.Fprintf(tc, "%s %s, server name %s\n", *label, how, st.ServerName)
		}()
	}
}

// selfSignedFor is a certificate for the public name, the one a client
// checks when the server turns its ECH down.
func selfSignedFor(name string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		DNSNames: []string{name}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// hpkePrivate reads an X25519 (PKCS#8) or P-curve private key as ECDH.
func hpkePrivate(data []byte) (*ecdh.PrivateKey, error) {
	blk, _ := pem.Decode(data)
	if blk == nil {
		return nil, errors.New("no PEM block")
	}
	var k any
	var err error
	if blk.Type == "EC PRIVATE KEY" {
		k, err = x509.ParseECPrivateKey(blk.Bytes)
	} else {
		k, err = x509.ParsePKCS8PrivateKey(blk.Bytes)
	}
	if err != nil {
		return nil, err
	}
	switch k := k.(type) {
	case *ecdh.PrivateKey:
		return k, nil
	case *ecdsa.PrivateKey:
		return k.ECDH()
	}
	return nil, fmt.Errorf("a %T key has no HPKE KEM", k)
}

// echClientMain is a browser's ECH path: it asks the DNS server for the
// name's HTTPS record, takes the ech SvcParam, and opens TLS to -connect
// with the name encrypted in the inner hello, printing what the server
// saw (or how ECH failed).
func echClientMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("ech-client", flag.ContinueOnError)
	fs.SetOutput(stderr)
	server := fs.String("dns", "", "the DNS server (the GSLB listener), address:port")
	name := fs.String("name", "", "the name to ask for (HTTPS) and to reach")
	connect := fs.String("connect", "", "the TLS server, address:port")
	bind := fs.String("bind", "", "the address to ask the DNS server from")
	caCert := fs.String("cacert", "", "the certificate (PEM) the server shows for the public name when it turns ECH down, so that its retry configs are read")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *server == "" || *name == "" || *connect == "" {
		return errors.New("ech-client needs -dns, -name and -connect")
	}
	q := new(dns.Msg)
	q.SetQuestion(dns.Fqdn(*name), dns.TypeHTTPS)
	cl := &dns.Client{Timeout: 5 * time.Second}
	if *bind != "" {
		cl.Dialer = &net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.UDPAddr{IP: net.ParseIP(*bind)}}
	}
	m, _, err := cl.ExchangeContext(ctx, q, *server)
	if err != nil {
		return err
	}
	var ech []byte
	for _, rr := range m.Answer {
		if h, ok := rr.(*dns.HTTPS); ok {
			for _, kv := range h.Value {
				if e, ok := kv.(*dns.SVCBECHConfig); ok && ech == nil {
					ech = e.ECH
					fmt.Fprintf(stdout, "HTTPS %s target %s has ech (%d bytes)\n", *name, h.Target, len(ech))
				}
			}
		}
	}
	if ech == nil {
		return fmt.Errorf("%s: no HTTPS record with ech in the answer (%s)", *name, dns.RcodeToString[m.Rcode])
	}
	var roots *x509.CertPool
	if *caCert != "" {
		b, err := os.ReadFile(*caCert)
		if err != nil {
			return err
		}
		roots = x509.NewCertPool()
		if !roots.AppendCertsFromPEM(b) {
			return fmt.Errorf("%s: no PEM certificate", *caCert)
		}
	}
	d := &net.Dialer{Timeout: 5 * time.Second}
	if *bind != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(*bind)}
	}
	c, err := tls.DialWithDialer(d, "tcp", *connect, &tls.Config{
		ServerName: strings.TrimSuffix(*name, "."), InsecureSkipVerify: true, MinVersion: tls.VersionTLS13,
		EncryptedClientHelloConfigList: ech, RootCAs: roots, // roots check the outer name when ECH is turned down
	})
	if err != nil {
		var rej *tls.ECHRejectionError
		if errors.As(err, &rej) {
			return fmt.Errorf("the server rejected ECH (its retry configs: %d bytes): %v", len(rej.RetryConfigList), err)
		}
		return err
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, line)
	return nil
}
