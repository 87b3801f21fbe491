package objects

import (
	"strings"
	"testing"

	"github.com/openltm/openltm/grammar"
)

// Statements of published tmsh scripts for kinds openltm keeps without
// acting on are accepted with their F5 properties, print back, and read back.
func TestTmshKindsOpenltmKeeps(t *testing.T) {
	for _, tc := range []struct {
		key, args, want, err string
	}{
		{"net vlan", "interfaces add { 1.1 { tagged } } tag 110", "net vlan x { interfaces { 1.1 { tagged } } tag 110 }", ""},
		{"net route", "network 10.3.99.0/24 gw 10.1.20.254", "net route x { gw 10.1.20.254 network 10.3.99.0/24 }", ""},
		{"net route", "network default blackhole", "net route x { blackhole network default }", ""},
		{"sys ntp", "servers replace-all-with { 0.pool.ntp.org 1.pool.ntp.org } timezone UTC", "sys ntp { servers { 0.pool.ntp.org 1.pool.ntp.org } timezone UTC }", ""},
		{"sys dns", "name-servers add { 10.1.1.2 } search add { lab.io }", "sys dns { name-servers { 10.1.1.2 } search { lab.io } }", ""},
		{"sys db", "value \"false\"", "sys db x { value \"false\" }", ""},
		{"sys management-route", "gateway 192.168.1.1 network default", "sys management-route x { gateway 192.168.1.1 network default }", ""},
		{"auth user", "partition-access add { all-partitions { role admin } } shell tmsh", "auth user x { partition-access { all-partitions { role admin } } shell tmsh }", ""},
		{"ltm cipher rule", "cipher ECDHE+AES-GCM", "ltm cipher rule x { cipher ECDHE+AES-GCM }", ""},
		{"ltm cipher group", "allow replace-all-with { strong { } } ordering speed", "ltm cipher group x { allow { strong { } } ordering speed }", ""},
		{"sys log-config destination remote-syslog", "remote-high-speed-log hsl format rfc3164", "sys log-config destination remote-syslog x { format rfc3164 remote-high-speed-log hsl }", ""},
		{"sys log-config publisher", "destinations add { rs }", "sys log-config publisher x { destinations { rs { } } }", ""},
		{"net dns-resolver", "forward-zones replace-all-with { . { nameservers replace-all-with { 10.1.1.2:53 } } }", "net dns-resolver x { forward-zones { . { nameservers { 10.1.1.2:53 { } } } } }", ""},
		{"net tunnels tunnel", "profile gre local-address 10.1.1.1 remote-address 10.2.2.2", "net tunnels tunnel x { local-address 10.1.1.1 profile gre remote-address 10.2.2.2 }", ""},
		{"ltm profile client-ssl", "defaults-from clientssl ciphers DEFAULT:!RC4", "ltm profile client-ssl x { ciphers DEFAULT:!RC4 defaults-from clientssl }", ""},
		{"ltm profile udp", "idle-timeout 30", "ltm profile udp x { idle-timeout 30 }", ""},
		{"ltm profile dns", "enable-dns-express no", "ltm profile dns x { enable-dns-express no }", ""},
		{"ltm monitor dns", "qname www.lab.io qtype aaaa", "ltm monitor dns x { qname www.lab.io qtype aaaa }", ""},
		{"ltm monitor inband", "failures 5", "ltm monitor inband x { failures 5 }", ""},
		{"ltm pool", "load-balancing-mode observed-member", "ltm pool x { load-balancing-mode observed-member }", ""},
		{"ltm profile socks", "protocol-versions replace-all-with { socks5 } default-connect-handling allow", "ltm profile socks x { default-connect-handling allow protocol-versions { socks5 } }", ""},
		// BIG-IP refuses these.
		{"ltm profile socks", "protocol-versions replace-all-with { socks6 }", "", `"socks6" is not a valid value for "protocol-versions"`},
		{"net route", "colour blue", "", `"colour" unknown property`},
		{"ltm monitor dns", "qtype mx", "", `"mx" is not a valid value for "qtype"`},
		{"net route", "network 10.3.99.0/24 gw 10.1.20.300", "", `"10.1.20.300" is not an IP address`},
		{"net route", "network 10.3.99.0/33", "", `"10.3.99.0/33" is not a network`},
		{"sys log-config destination management-port", "ip-address 10.1.1.1 port 99999", "", `"99999" is out of range for "port"`},
		{"sys ntp", "servers add 10.1.1.1", "", `"add" needs a { } list`},
	} {
		got, err := apply(t, tc.key, ModeCreate, nil, tc.args)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s %s: error %v, want it to contain %q", tc.key, tc.args, err, tc.err)
			}
			continue
		case err != nil:
			t.Errorf("%s %s: %v", tc.key, tc.args, err)
			continue
		case got != tc.want:
			t.Errorf("%s %s:\n got %s\nwant %s", tc.key, tc.args, got, tc.want)
			continue
		}
		// What list prints, load reads back to the same.
		objs, err := Default.ReadConfig("listed.conf", []byte(got), nil)
		if err != nil {
			t.Errorf("%s: its listing does not load: %v", tc.key, err)
			continue
		}
		if again := strings.TrimSpace(Format(objs[0], PrintOpts{Folder: "/Common", OneLine: true})); again != got && !Default.Kind(tc.key).Singleton {
			t.Errorf("%s: listing → load → listing differs:\n%s\n%s", tc.key, got, again)
		}
	}
}

// Names follow F5's rules: characters, length, partitions that exist.
func TestNames(t *testing.T) {
	pool := Default.Kind("ltm pool")
	long := "/Common/" + strings.Repeat("p", 100000)
	for _, tc := range []struct {
		kind *Kind
		name string
		ok   bool
	}{
		{pool, "/Common/web_pool-1.a", true},
		{pool, "/Common/app.app/web", true},
		{pool, "/Common/pool with space", false},
		{pool, long, false},
		{pool, "/Common/p{1}", false},
		{pool, "/Common/", false},
		{pool, "/Common//p", false},
		{Default.Kind("gtm wideip a"), "/Common/*.lab.io", true},
		{Default.Kind("ltm node"), "/Common/10.1.1.1%2", true},
		{Default.Kind("sys db"), "ui.advisory.enabled", true},
		{Default.Kind("sys management-ip"), "192.168.1.245/24", true},
		{Default.Kind("auth user"), "a/b", false},
	} {
		err := CheckName(tc.kind, tc.name)
		if (err == nil) != tc.ok {
			t.Errorf("%s %.40s: error %v, want ok=%v", tc.kind.Key(), tc.name, err, tc.ok)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "01070088:3: The requested object name (") {
			t.Errorf("%.40s: %v is not BIG-IP's message", tc.name, err)
		}
	}
	// On the command line: tmsh create reads the name the shell made.
	o := &Object{Kind: pool, Name: "/Common/pool with space", Props: map[string]*Value{}}
	r := &Reader{Schema: Default, Folder: "/Common", Mode: ModeCreate}
	st, _ := grammar.ParseStatement("create ltm pool x", grammar.Options{})
	if err := r.ReadProps(st, o, nil); err == nil || !strings.Contains(err.Error(), "01070088") {
		t.Errorf("create of %q: %v", o.Name, err)
	}
	// In a file, with the position of the name.
	l := readAndCheck("ltm pool \"/Common/pool with space\" { }\n")
	if f := l.Findings.Refused(); len(f) != 1 || f[0].Pos.Column != 10 || f[0].Code != "01070088" {
		t.Errorf("file with a spaced name: %v", l.Findings)
	}
	// A partition that does not exist.
	c := Default.Builtins()
	c.Put(&Object{Kind: pool, Name: "/Other/p9", Props: map[string]*Value{}})
	err := c.Validate(Default)
	if err == nil || err.Error() != "01070734:3: Configuration error: Can't associate Pool (/Other/p9) folder does not exist" {
		t.Errorf("pool in a partition that does not exist: %v", err)
	}
	c.Put(&Object{Kind: Default.Kind("auth partition"), Name: "Other", Props: map[string]*Value{}})
	if err := c.Validate(Default); err != nil {
		t.Errorf("after creating the partition: %v", err)
	}
}
