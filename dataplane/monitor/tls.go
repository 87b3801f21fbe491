package monitor

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"net"
	"strings"

	"github.com/openltm/openltm/dataplane/tlsprof"
)

// TLS is how an https monitor (or an http monitor with ssl) speaks TLS.
type TLS struct {
	// Ciphers is the cipherlist, an F5 cipher string ("" = DEFAULT).
	Ciphers string
	// ServerName is sent as SNI; "" takes the Host header of the send
	// string, and no SNI when there is none.
	ServerName string
	// Certificate is offered when the member asks for one (the monitor's
	// cert and key); nil offers none.
	Certificate *tls.Certificate
	// Strict is compatibility disabled: TLS 1.2 and above only, where
	// enabled (BIG-IP's default) lets the probe talk to members that
	// still speak older versions [M].
	Strict bool
	// Profile is the server-ssl profile's configuration (ssl-profile):
	// when set, the probe uses its certificate, ciphers and options, and
	// Ciphers, Certificate and Strict are not used [M].
	Profile *tls.Config
	// ProfileID names Profile's settings: equal IDs, equal profiles.
	ProfileID string
}

func (t *TLS) equal(o *TLS) bool {
	if t == nil || o == nil {
		return t == o
	}
	if t.Ciphers != o.Ciphers || t.ServerName != o.ServerName || (t.Certificate == nil) != (o.Certificate == nil) ||
		t.Strict != o.Strict || t.ProfileID != o.ProfileID || (t.Profile == nil) != (o.Profile == nil) {
		return false
	}
	if t.Certificate == nil {
		return true
	}
	a, b := t.Certificate.Certificate, o.Certificate.Certificate
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// config builds the client configuration; t may be nil (https defaults).
func (t *TLS) config(send string) (*tls.Config, error) {
	var ciphers, name string
	var cert *tls.Certificate
	if t != nil {
		ciphers, name, cert = t.Ciphers, t.ServerName, t.Certificate
		if t.Profile != nil {
			cfg := t.Profile.Clone()
			if cfg.ServerName == "" {
				if name == "" {
					name = hostHeader(send)
				}
				cfg.ServerName = name
			}
			return cfg, nil
		}
	}
	if ciphers == "" {
		ciphers = "DEFAULT"
	}
	l, err := tlsprof.ParseCiphers(ciphers)
	if err != nil {
		return nil, fmt.Errorf("cipherlist: %v", err)
	}
	vs := l.Versions()
	if len(vs) == 0 {
		return nil, fmt.Errorf("cipherlist %q selects no suite Go's TLS can do (selected: %s)", ciphers, strings.Join(l.Names(), ", "))
	}
	if t != nil && t.Strict {
		if vs[len(vs)-1] < tls.VersionTLS12 {
			return nil, fmt.Errorf("cipherlist %q selects no TLS 1.2 or later suite, which compatibility disabled requires", ciphers)
		}
		vs[0] = max(vs[0], tls.VersionTLS12)
	}
	if name == "" {
		name = hostHeader(send)
	}
	cfg := &tls.Config{
		InsecureSkipVerify: true, // BIG-IP's https monitor does not verify members
		ServerName:         name,
		CipherSuites:       l.Suites(),
		MinVersion:         vs[0],
		MaxVersion:         vs[len(vs)-1],
	}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	return cfg, nil
}

// hostHeader is the Host header's name in an HTTP send string (escapes
// already turned into bytes), without a port.
func hostHeader(send string) string {
	for line := range strings.SplitSeq(send, "\n") {
		k, v, ok := strings.Cut(strings.TrimRight(line, "\r"), ":")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "host") {
			continue
		}
		v = strings.TrimSpace(v)
		if h, _, err := net.SplitHostPort(v); err == nil {
			v = h
		}
		return strings.Trim(v, "[]")
	}
	return ""
}
