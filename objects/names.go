package objects

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

var portNames = func() map[int]string {
	m := make(map[int]string, len(servicePorts))
	for name, p := range servicePorts {
		m[p] = name
	}
	return m
}()

// ParsePort reads a port by number or service name (`http`, `any`).
func ParsePort(s string) (int, error) {
	if p, ok := servicePorts[s]; ok {
		return p, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 65535 {
		return 0, fmt.Errorf("%q is not a port: use a number from 0 to 65535 or a service name such as http or any", s)
	}
	return n, nil
}

// PortName prints a port the way tmsh list does: its service name when it
// has one, else the number.
func PortName(p int) string {
	if n, ok := portNames[p]; ok {
		return n
	}
	return strconv.Itoa(p)
}

// FullPath makes name absolute within folder: `p1` in /Common is /Common/p1.
func FullPath(folder, name string) string {
	if strings.HasPrefix(name, "/") || name == "" || folder == "" {
		return name
	}
	if folder == "/" {
		return "/" + name
	}
	return folder + "/" + name
}

// RelPath prints path relative to folder, as tmsh list does from inside it;
// paths elsewhere stay absolute.
func RelPath(folder, path string) string {
	if folder == "" {
		return path
	}
	if strings.HasPrefix(path, folder+"/") {
		return path[len(folder)+1:]
	}
	return path
}

// Partition is the first component of a full path (/Common/x → Common).
func Partition(path string) string {
	p := strings.TrimPrefix(path, "/")
	if i := strings.IndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return p
}

// Dest is a parsed address:port as BIG-IP writes them: IPv4 `a.b.c.d:port`,
// IPv6 `addr.port`, route domain `%N` after the address, `any`/`any6`
// wildcards.
type Dest struct {
	Folder string // "/Common" when the text had one
	Addr   netip.Addr
	RD     int
	Port   int
	Any    bool // any or any6 address
	Six    bool // any6
}

// ParseDest reads `[/Folder/]addr[%rd]:port` or `addr[%rd].port` (IPv6).
func ParseDest(s string) (Dest, error) {
	var d Dest
	orig := s
	if strings.HasPrefix(s, "/") {
		i := strings.LastIndexByte(s, '/')
		d.Folder, s = s[:i], s[i+1:]
		if d.Folder == "" || strings.Contains(d.Folder+"/", "//") {
			return d, fmt.Errorf("%q: a folder name is empty; write /Folder/address:port, e.g. /Common/10.1.1.1:80", orig)
		}
	}
	var host, port string
	if strings.Count(s, ":") > 1 || strings.HasPrefix(s, "any6") {
		i := strings.LastIndexByte(s, '.')
		if i < 0 {
			return d, fmt.Errorf("%q: an IPv6 destination is written address.port, e.g. dead:beef::1.80", orig)
		}
		host, port = s[:i], s[i+1:]
	} else {
		i := strings.LastIndexByte(s, ':')
		if i < 0 {
			return d, fmt.Errorf("%q: a destination is written address:port, e.g. 10.1.1.1:80 or 10.1.1.1:http", orig)
		}
		host, port = s[:i], s[i+1:]
	}
	p, err := ParsePort(port)
	if err != nil {
		return d, fmt.Errorf("%q: %v", orig, err)
	}
	d.Port = p
	if err := d.setHost(host); err != nil {
		return d, fmt.Errorf("%q: %v", orig, err)
	}
	return d, nil
}

// SplitRouteDomain splits BIG-IP's ADDRESS%ID into the address and the
// route domain id (0 without one), for every kind that writes addresses
// in a route domain (virtual destinations, NATs, SNATs); ok is false
// when the text after % is not a number 0 or above.
func SplitRouteDomain(s string) (addr string, rd int, ok bool) {
	i := strings.IndexByte(s, '%')
	if i < 0 {
		return s, 0, true
	}
	rd, err := strconv.Atoi(s[i+1:])
	if err != nil || rd < 0 {
		return s[:i], 0, false
	}
	return s[:i], rd, true
}

func (d *Dest) setHost(host string) error {
	h, rd, ok := SplitRouteDomain(host)
	if !ok {
		return fmt.Errorf("route domain %q is not a number", host[strings.IndexByte(host, '%')+1:])
	}
	d.RD, host = rd, h
	switch host {
	case "any", "0.0.0.0":
		d.Any, d.Addr = true, netip.IPv4Unspecified()
		return nil
	case "any6", "::":
		d.Any, d.Six, d.Addr = true, true, netip.IPv6Unspecified()
		return nil
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("%q is not an IP address", host)
	}
	d.Addr = a
	if a.IsUnspecified() {
		// ::0 and the like are the wildcard as any6 is, and print so.
		d.Any, d.Six = true, a.Is6()
	}
	return nil
}

func (d Dest) host() string {
	h := d.Addr.String()
	if d.Any {
		h = "any"
		if d.Six {
			h = "any6"
		}
	}
	if d.RD != 0 {
		h += "%" + strconv.Itoa(d.RD)
	}
	return h
}

func (d Dest) sep() string {
	if d.Six || (d.Addr.Is6() && !d.Addr.Is4In6()) {
		return "."
	}
	return ":"
}

// Canonical is the stored form: full path and numeric port.
func (d Dest) Canonical(folder string) string {
	f := d.Folder
	if f == "" {
		f = folder
	}
	return FullPath(f, d.host()+d.sep()+strconv.Itoa(d.Port))
}

// Display is the list form: relative to folder, port by service name.
func (d Dest) Display(folder string) string { return d.display(folder, false) }

// display is Display, the port by number when numeric.
func (d Dest) display(folder string, numeric bool) string {
	port := PortName(d.Port)
	if numeric {
		port = strconv.Itoa(d.Port)
	}
	return RelPath(folder, FullPath(d.Folder, d.host()+d.sep()+port))
}

// AddrPort is the socket address, for the dataplane.
func (d Dest) AddrPort() netip.AddrPort { return netip.AddrPortFrom(d.Addr, uint16(d.Port)) }

// SplitMember splits a member name `/Common/node:port` (IPv6 `node.port`)
// into node path and port.
func SplitMember(name string) (node string, port int, err error) {
	base := name[strings.LastIndexByte(name, '/')+1:]
	sep := ":"
	if strings.Count(base, ":") > 1 {
		sep = "."
	}
	i := strings.LastIndex(name, sep)
	if i < 0 || i < len(name)-len(base) {
		return "", 0, fmt.Errorf("%q: a pool member is written node:port, e.g. 10.1.1.1:80 or web1:http", name)
	}
	if i == len(name)-len(base) {
		return "", 0, fmt.Errorf("%q: the node name is empty; a pool member is written node:port, e.g. 10.1.1.1:80 or web1:http", name)
	}
	p, err := ParsePort(name[i+1:])
	if err != nil {
		return "", 0, fmt.Errorf("%q: %v", name, err)
	}
	return name[:i], p, nil
}

// NodeAddr returns the address a node name stands for when the name is an
// address (BIG-IP names auto-created nodes by their address).
func NodeAddr(node string) (netip.Addr, bool) {
	base := node[strings.LastIndexByte(node, '/')+1:]
	if i := strings.IndexByte(base, '%'); i >= 0 {
		base = base[:i]
	}
	a, err := netip.ParseAddr(base)
	return a, err == nil
}

// memberName canonicalises a typed member name in folder.
func memberName(folder, s string) (string, error) {
	node, port, err := SplitMember(s)
	if err != nil {
		return "", err
	}
	node = FullPath(folder, node)
	sep := ":"
	if a, ok := NodeAddr(node); ok && a.Is6() && !a.Is4In6() {
		sep = "."
	}
	return node + sep + strconv.Itoa(port), nil
}

// memberDisplay prints a member name for list: relative, the port by
// service name, or by number when numeric.
func memberDisplay(folder, name string, numeric bool) string {
	node, port, err := SplitMember(name)
	if err != nil {
		return RelPath(folder, name)
	}
	sep := name[len(node) : len(node)+1]
	if numeric {
		return RelPath(folder, node) + sep + strconv.Itoa(port)
	}
	return RelPath(folder, node) + sep + PortName(port)
}

// maxNameLen is the longest object name (each part of its path) BIG-IP
// takes; longer ones are refused as invalid names.
const maxNameLen = 255

// CheckName refuses an object name BIG-IP refuses: empty path parts,
// spaces, control characters, quotes, braces and other characters tmsh
// does not allow in names, and over-long names. The error is BIG-IP's
// 01070088.
func CheckName(k *Kind, name string) error {
	if k == nil || k.Singleton || k.Key() == "gtm topology" {
		return nil
	}
	bad := func() error {
		shown := name
		if len(shown) > 80 {
			shown = fmt.Sprintf("%s... (%d characters)", shown[:60], len(name))
		}
		return &ConfigError{Code: "01070088", Msg: fmt.Sprintf("The requested object name (%s) is invalid.", shown)}
	}
	path := name
	if k.PlainNames {
		if name == "" || len(name) > maxNameLen {
			return bad()
		}
	} else {
		if k.Key() == "sys folder" && name == "/" {
			return nil
		}
		if !strings.HasPrefix(path, "/") || strings.HasSuffix(path, "/") {
			return bad()
		}
		for _, part := range strings.Split(path[1:], "/") {
			if part == "" || len(part) > maxNameLen {
				return bad()
			}
		}
	}
	wild := strings.HasPrefix(k.Key(), "gtm wideip")
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c <= ' ' || c >= 0x7f:
			return bad()
		case strings.IndexByte("\"'{}[]\\;#$&|<>`!", c) >= 0:
			return bad()
		case (c == '*' || c == '?') && !wild:
			return bad()
		case c == '/' && k.PlainNames && k.Key() != "sys management-ip":
			return bad()
		}
	}
	return nil
}

// plainName is the name of a PlainNames object typed as a path: the part
// after its folder (sys db keys, user names).
func plainName(name string) string {
	if !strings.HasPrefix(name, "/") {
		return name
	}
	// The folder the name was made full in may be a subfolder
	// (/Dev/app/admin): what is left of the last slash is folders, but
	// for an address with its prefix length (sys management-ip
	// 10.1.1.245/24).
	parts := strings.Split(name[1:], "/")
	n := len(parts)
	if n >= 2 {
		if _, err := netip.ParsePrefix(parts[n-2] + "/" + parts[n-1]); err == nil {
			return parts[n-2] + "/" + parts[n-1]
		}
	}
	if n >= 2 {
		return parts[n-1]
	}
	return name
}

// isRefName: s may name an object (CheckName's rules, in the folder
// /Common when relative), for a list whose elements are addresses or
// names (a snatpool's members), and is not meant as an address: a last
// part of digits and dots only (300.1.1.1), or with a colon, is a
// mistyped address, refused as one rather than looked up as a name.
func isRefName(s string) bool {
	base := lastPart(s)
	if i := strings.IndexByte(base, '%'); i >= 0 {
		base = base[:i]
	}
	if strings.Trim(base, "0123456789.") == "" || strings.Contains(base, ":") {
		return false
	}
	return CheckName(&Kind{Words: []string{"ref"}}, FullPath("/Common", s)) == nil
}
