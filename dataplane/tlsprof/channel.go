package tlsprof

import (
	"fmt"
	"slices"
	"strings"
)

// ParseVersion reads a protocol version as BIG-IP names it (TLSv1,
// TLSv1.1, TLSv1.2, TLSv1.3), so settings outside profiles that take one
// (a gtm server's iquery-minimum-tls-version) read it as profiles print it.
func ParseVersion(s string) (uint16, bool) {
	for _, v := range []uint16{verTLS10, verTLS11, verTLS12, verTLS13} {
		if strings.EqualFold(s, VersionName(v)) {
			return v, true
		}
	}
	return 0, false
}

// Channel is what a cipher string and a minimum protocol version leave
// for a TLS connection openltm makes outside a profile (the iQuery
// channel), in crypto/tls terms: the same reading as a client-ssl
// profile's ciphers, so one cipher string means the same everywhere.
type Channel struct {
	// Suites are the TLS 1.0–1.2 suites (crypto/tls always offers its
	// three TLS 1.3 suites when TLS 1.3 is on).
	Suites     []uint16
	MinVersion uint16
	MaxVersion uint16
	Warnings   []string
}

// ChannelOf reads ciphers ("" or none: DEFAULT) and keeps the protocol
// versions it allows from min up; what names the setting in errors. A
// string that does not parse, selects nothing Go can do, or leaves no
// version at or above min is an error.
func ChannelOf(what, ciphers string, min uint16) (*Channel, error) {
	l, warns, err := selection(what, ciphers, nil)
	if err != nil {
		return nil, err
	}
	all := l.Versions()
	vs := slices.DeleteFunc(slices.Clone(all), func(v uint16) bool { return v < min })
	if len(vs) == 0 {
		return nil, fmt.Errorf("%s: the cipher list allows %s, nothing at or above the minimum version %s", what, versionNames(all), VersionName(min))
	}
	lo := len(vs) - 1
	for lo > 0 && vs[lo-1] == vs[lo]-1 {
		lo--
	}
	if lo > 0 {
		warns = append(warns, fmt.Sprintf("%s: Go cannot leave a gap between protocol versions; %s off", what, versionNames(vs[:lo])))
	}
	return &Channel{Suites: l.Suites(), MinVersion: vs[lo], MaxVersion: vs[len(vs)-1], Warnings: warns}, nil
}
