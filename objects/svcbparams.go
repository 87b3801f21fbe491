package objects

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strings"
	"unicode/utf8"
)

// The ech and dohpath SvcParams of gtm pool svcb/https members are
// checked as they are read, so that a bad value is refused at its
// line:column rather than at commit. dataplane/gslb (ParseECHConfigList,
// CheckDoHPath) checks them again when it builds the answers; objects
// imports no dataplane package, hence the second, shorter reading here.

// checkECH reads an ECHConfigList in base64: the list's length, each
// config's version and length, and the fields of the 0xfe0d ones; one
// config of that version at least.
func checkECH(s string) error {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return fmt.Errorf("%q is not base64: use the base64 of an ECHConfigList (as an ECH server or openssl ech writes it)", s)
	}
	fail := func(why string) error {
		return fmt.Errorf("ech %q is not an ECHConfigList (give the base64 of one, as an ECH server writes it): %s", s, why)
	}
	vec := func(b []byte) ([]byte, []byte, bool) {
		if len(b) < 2 || len(b)-2 < int(binary.BigEndian.Uint16(b)) {
			return nil, nil, false
		}
		n := int(binary.BigEndian.Uint16(b))
		return b[2 : 2+n], b[2+n:], true
	}
	list, rest, ok := vec(b)
	if !ok || len(rest) != 0 || len(list) == 0 {
		return fail("its length is wrong")
	}
	known := 0
	for len(list) > 0 {
		if len(list) < 2 {
			return fail("a config is cut short")
		}
		v := binary.BigEndian.Uint16(list)
		body, next, ok := vec(list[2:])
		if !ok {
			return fail("a config is cut short")
		}
		list = next
		if v != 0xfe0d {
			continue
		}
		known++
		// config_id, kem_id, public_key<1..>, cipher_suites<4..>,
		// maximum_name_length, public_name<1..255>, extensions<0..>.
		if len(body) < 3 {
			return fail("a config is cut short")
		}
		key, r, ok := vec(body[3:])
		if !ok || len(key) == 0 {
			return fail("a config's public_key is missing")
		}
		suites, r, ok := vec(r)
		if !ok || len(suites) == 0 || len(suites)%4 != 0 {
			return fail("a config's cipher_suites are wrong")
		}
		if len(r) < 2 || int(r[1]) == 0 || len(r) < 2+int(r[1]) {
			return fail("a config's public_name is missing")
		}
		for _, c := range r[2 : 2+int(r[1])] {
			if c <= ' ' || c >= 0x7f {
				return fail("a config's public_name is not a DNS name")
			}
		}
		r = r[2+int(r[1]):]
		if _, r, ok = vec(r); !ok || len(r) != 0 {
			return fail("a config's extensions are wrong")
		}
	}
	if known == 0 {
		return fail("no config of version 0xfe0d")
	}
	return nil
}

// checkDoHPath reads a dohpath (RFC 9461): a URI template beginning with
// / with a dns variable, e.g. /dns-query{?dns}; the same reading as
// dataplane/gslb's CheckDoHPath.
func checkDoHPath(s string) error {
	if !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) || !strings.HasPrefix(s, "/") {
		return fmt.Errorf("%q is not a relative URI template: use one beginning with / such as /dns-query{?dns}", s)
	}
	hasDNS := false
	for rest := s; ; {
		i := strings.IndexAny(rest, "{}")
		if i < 0 {
			break
		}
		if rest[i] == '}' {
			return fmt.Errorf("dohpath %q: a } closes no expression", s)
		}
		j := strings.IndexAny(rest[i+1:], "{}")
		if j < 0 || rest[i+1+j] == '{' {
			return fmt.Errorf("dohpath %q: a { is not closed", s)
		}
		for _, v := range strings.Split(strings.TrimLeft(rest[i+1:i+1+j], "+#./;?&"), ",") {
			if name, _, _ := strings.Cut(strings.TrimSuffix(v, "*"), ":"); name == "dns" {
				hasDNS = true
			}
		}
		rest = rest[i+1+j+1:]
	}
	if !hasDNS {
		return fmt.Errorf("dohpath %q has no {?dns} variable, where the client puts its query (e.g. /dns-query{?dns})", s)
	}
	return nil
}

// withFormat sets a row's Format, the further check its words get.
func withFormat(p *Prop, f string) *Prop {
	p.Format = f
	return p
}
