package heartbeat

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// ParseUnicast reads a cm device's unicast-address value as tmsh writes it,
// `{ { ip 10.1.1.1 port 1026 } { ip 10.2.2.1 } }`: each entry's ip and
// port (DefaultPort when absent; `effective-ip` and `effective-port`, which
// BIG-IP lists, are the same). "none" or an empty value is no address.
func ParseUnicast(raw string) ([]netip.AddrPort, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" || raw == "none" {
		return nil, nil
	}
	toks := strings.Fields(strings.NewReplacer("{", " { ", "}", " } ").Replace(raw))
	var out []netip.AddrPort
	depth := 0
	var ip, port string
	for i := 0; i < len(toks); i++ {
		switch t := toks[i]; t {
		case "{":
			depth++
			if depth == 2 {
				ip, port = "", ""
			}
		case "}":
			if depth == 2 {
				a, err := unicastEntry(ip, port)
				if err != nil {
					return nil, err
				}
				out = append(out, a)
			}
			depth--
			if depth < 0 {
				return nil, fmt.Errorf("unicast-address %q: unbalanced braces", raw)
			}
		default:
			if depth != 2 || i+1 >= len(toks) {
				return nil, fmt.Errorf("unicast-address %q: unexpected %q; valid: { { ip ADDRESS [port PORT] } ... }", raw, t)
			}
			v := toks[i+1]
			i++
			switch t {
			case "ip", "effective-ip":
				if ip == "" || t == "ip" {
					ip = v
				}
			case "port", "effective-port":
				if port == "" || t == "port" {
					port = v
				}
			default:
				return nil, fmt.Errorf("unicast-address %q: unknown property %q; valid: ip, port", raw, t)
			}
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("unicast-address %q: unbalanced braces", raw)
	}
	return out, nil
}

func unicastEntry(ip, port string) (netip.AddrPort, error) {
	if ip == "" {
		return netip.AddrPort{}, fmt.Errorf("unicast-address entry without ip; valid: { ip ADDRESS [port PORT] }")
	}
	a, err := netip.ParseAddr(strings.TrimSuffix(ip, "%0"))
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("unicast-address ip %q is not an IP address", ip)
	}
	p := uint64(DefaultPort)
	if port != "" {
		if p, err = strconv.ParseUint(port, 10, 16); err != nil || p == 0 {
			return netip.AddrPort{}, fmt.Errorf("unicast-address port %q: valid ports are 1-65535", port)
		}
	}
	return netip.AddrPortFrom(a, uint16(p)), nil
}
