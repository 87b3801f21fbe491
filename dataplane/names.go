package dataplane

import (
	"strconv"
	"strings"
)

// JoinPort writes name:port the way BIG-IP names members and flows:
// "/Common/10.1.1.1:80", and '.' before the port after an IPv6 address
// ("dead:beef::1.80"), port 0 as "any" only where callers ask for it.
func JoinPort(name string, port uint16) string {
	sep := ":"
	base := name
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		base = name[i+1:]
	}
	if strings.Contains(base, ":") {
		sep = "."
	}
	return name + sep + strconv.Itoa(int(port))
}

func itoa(i int) string { return strconv.Itoa(i) }
