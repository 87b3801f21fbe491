package radius

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Value types a rule reads and writes an attribute as (RADIUS::avp's
// type argument): string is the raw octets, integer a 32-bit unsigned
// number (RFC 2865 §5's "integer" and "time"), ip4 and ip6 an address.
const (
	TypeString  = "string"
	TypeInteger = "integer"
	TypeIP4     = "ip4"
	TypeIP6     = "ip6"
)

// ParseType reads a type as a rule writes it; ipv4 and ipv6 are taken
// for ip4 and ip6, octets for string [M].
func ParseType(s string) (string, bool) {
	switch strings.ToLower(s) {
	case "string", "octets", "text":
		return TypeString, true
	case "integer", "int", "time":
		return TypeInteger, true
	case "ip4", "ipv4", "address":
		return TypeIP4, true
	case "ip6", "ipv6":
		return TypeIP6, true
	}
	return "", false
}

// Format is value v read as type typ; an error when its length does not
// fit the type (an integer that is not 4 bytes).
func Format(v []byte, typ string) (string, error) {
	switch typ {
	case TypeInteger:
		if len(v) != 4 {
			return "", fmt.Errorf("the value is %d bytes, not an integer's 4", len(v))
		}
		return strconv.FormatUint(uint64(binary.BigEndian.Uint32(v)), 10), nil
	case TypeIP4:
		if len(v) != 4 {
			return "", fmt.Errorf("the value is %d bytes, not an IPv4 address's 4", len(v))
		}
		return netip.AddrFrom4([4]byte(v)).String(), nil
	case TypeIP6:
		if len(v) != 16 {
			return "", fmt.Errorf("the value is %d bytes, not an IPv6 address's 16", len(v))
		}
		return netip.AddrFrom16([16]byte(v)).String(), nil
	}
	return string(v), nil
}

// Encode is text s as a value of type typ.
func Encode(s string, typ string) ([]byte, error) {
	switch typ {
	case TypeInteger:
		n, err := strconv.ParseUint(s, 0, 32)
		if err != nil {
			return nil, fmt.Errorf("%q is not an unsigned 32-bit integer", s)
		}
		return binary.BigEndian.AppendUint32(nil, uint32(n)), nil
	case TypeIP4:
		a, err := netip.ParseAddr(s)
		if err != nil || !a.Is4() {
			return nil, fmt.Errorf("%q is not an IPv4 address", s)
		}
		b := a.As4()
		return b[:], nil
	case TypeIP6:
		a, err := netip.ParseAddr(s)
		if err != nil || !a.Is6() || a.Is4In6() && strings.Contains(s, ".") {
			return nil, fmt.Errorf("%q is not an IPv6 address", s)
		}
		b := a.As16()
		return b[:], nil
	}
	return []byte(s), nil
}

// attrNames are the RFC 2865 and 2866 attributes a rule or a profile
// may name instead of giving the number, with the type each is read as
// by default.
var attrNames = map[string]struct {
	t   uint8
	typ string
}{
	"user-name": {1, TypeString}, "user-password": {2, TypeString}, "chap-password": {3, TypeString},
	"nas-ip-address": {4, TypeIP4}, "nas-port": {5, TypeInteger}, "service-type": {6, TypeInteger},
	"framed-protocol": {7, TypeInteger}, "framed-ip-address": {8, TypeIP4}, "framed-ip-netmask": {9, TypeIP4},
	"framed-routing": {10, TypeInteger}, "filter-id": {11, TypeString}, "framed-mtu": {12, TypeInteger},
	"reply-message": {18, TypeString}, "callback-number": {19, TypeString}, "state": {24, TypeString},
	"class": {25, TypeString}, "vendor-specific": {26, TypeString}, "session-timeout": {27, TypeInteger},
	"idle-timeout": {28, TypeInteger}, "called-station-id": {30, TypeString}, "calling-station-id": {31, TypeString},
	"nas-identifier": {32, TypeString}, "proxy-state": {33, TypeString},
	"acct-status-type": {40, TypeInteger}, "acct-delay-time": {41, TypeInteger}, "acct-input-octets": {42, TypeInteger},
	"acct-output-octets": {43, TypeInteger}, "acct-session-id": {44, TypeString}, "acct-authentic": {45, TypeInteger},
	"acct-session-time": {46, TypeInteger}, "acct-input-packets": {47, TypeInteger}, "acct-output-packets": {48, TypeInteger},
	"acct-terminate-cause": {49, TypeInteger}, "acct-multi-session-id": {50, TypeString}, "acct-link-count": {51, TypeInteger},
	"event-timestamp": {55, TypeInteger}, "chap-challenge": {60, TypeString}, "nas-port-type": {61, TypeInteger},
	"port-limit": {62, TypeInteger}, "message-authenticator": {80, TypeString}, "nas-port-id": {87, TypeString},
	"framed-ipv6-prefix": {97, TypeString}, "nas-ipv6-address": {95, TypeIP6},
}

// ParseAttr reads an attribute as a rule or the profile's persist-avp
// names it: its number (1-255) or its RFC 2865/2866 name, any case; typ
// is the type its value is read as when none is given.
func ParseAttr(s string) (t uint8, typ string, err error) {
	if n, err := strconv.Atoi(s); err == nil {
		if n < 1 || n > 255 {
			return 0, "", fmt.Errorf("attribute %d is outside 1..255", n)
		}
		typ = TypeString
		for _, a := range attrNames {
			if int(a.t) == n {
				typ = a.typ
			}
		}
		return uint8(n), typ, nil
	}
	a, ok := attrNames[strings.ToLower(s)]
	if !ok {
		return 0, "", fmt.Errorf("%q is neither an attribute number (1-255) nor an RFC 2865/2866 attribute name (User-Name, Calling-Station-Id, ...)", s)
	}
	return a.t, a.typ, nil
}
