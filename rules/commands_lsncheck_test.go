package rules

import (
	"strings"
	"testing"
)

// TestLSNCompileChecks: the LSN:: and XLAT:: commands' literal words are
// checked when the rule is compiled, each error at its word's (or an
// XLAT::listen clause's) line:column; words made at run time are left
// to the run; the forms openltm does not act on mark the rule
// unsupported.
func TestLSNCompileChecks(t *testing.T) {
	cases := []struct {
		name, body  string
		err         string // with its position; "" compiles
		unsupported string
	}{
		{name: "inbound-entry create", body: `LSN::inbound-entry create -mirror -override cgnat 60 10.1.1.1:5000 127.203.7.1:30002 udp`},
		{name: "inbound-entry bad subcommand", body: `LSN::inbound-entry make cgnat`, err: `:2:20: LSN::inbound-entry: bad subcommand "make"`},
		{name: "inbound-entry bad option", body: `LSN::inbound-entry create -mirrror cgnat 60 10.1.1.1:5000 127.203.7.1:30002 udp`, err: `:2:27: LSN::inbound-entry: bad option "-mirrror": must be -mirror or -override`},
		{name: "inbound-entry arity", body: `LSN::inbound-entry create cgnat 60 10.1.1.1:5000 udp`, err: `:2:1: wrong # args: should be "LSN::inbound-entry get|delete`},
		{name: "inbound-entry get arity", body: `LSN::inbound-entry get 127.203.7.1:30002`, err: `:2:1: wrong # args`},
		{name: "inbound-entry protocol", body: `LSN::inbound-entry get 127.203.7.1:30002 sctp`, err: `:2:42: LSN::inbound-entry: protocol "sctp" is not tcp or udp`},
		{name: "inbound-entry lifetime", body: `LSN::inbound-entry create cgnat 1y 10.1.1.1:5000 127.203.7.1:30002 udp`, err: `:2:33: LSN::inbound-entry: lifetime "1y"`},
		{name: "inbound-entry client port", body: `LSN::inbound-entry create cgnat 60 10.1.1.1 127.203.7.1:30002 udp`, err: `:2:36: LSN::inbound-entry: client "10.1.1.1" has no port`},
		{name: "inbound-entry pool from a variable", body: `LSN::inbound-entry create $pool 60 10.1.1.1:5000 127.203.7.1:30002 bad`, err: `:2:68: LSN::inbound-entry: protocol "bad"`},
		{name: "inbound-entry option from a variable", body: `LSN::inbound-entry create $opt cgnat 60 10.1.1.1:5000 127.203.7.1:30002 udp`},
		{name: "inbound-entry dslite", body: `LSN::inbound-entry create -dslite 2001:db8::1 cgnat 60 10.1.1.1:5000 127.203.7.1:30002 udp`, unsupported: "LSN::inbound-entry -dslite"},
		{name: "persistence-entry create", body: `LSN::persistence-entry create -override cgnat 10.1.1.2:4000 127.203.7.1:30005 90`},
		{name: "persistence-entry create, the flow's pool", body: `LSN::persistence-entry create 10.1.1.2 127.203.7.1`},
		{name: "persistence-entry arity", body: `LSN::persistence-entry create cgnat 10.1.1.2 127.203.7.1 90 12`, err: `:2:1: wrong # args: should be "LSN::persistence-entry`},
		{name: "persistence-entry translation", body: `LSN::persistence-entry create cgnat 10.1.1.2 127.203.7.x`, err: `:2:46: LSN::persistence-entry: translation "127.203.7.x" is not ADDR:PORT`},
		{name: "persistence-entry timeout", body: `LSN::persistence-entry create cgnat 10.1.1.2 127.203.7.1 -5`, err: `:2:58: LSN::persistence-entry: lifetime "-5"`},
		{name: "persistence-entry get arity", body: `LSN::persistence-entry get 10.1.1.2 tcp`, err: `:2:1: wrong # args`},
		{name: "persistence-entry bad subcommand", body: `LSN::persistence-entry lookup 10.1.1.2`, err: `:2:24: LSN::persistence-entry: bad subcommand "lookup"`},
		{name: "listen", body: "XLAT::listen -single-connection 30 {\n  proto 17\n  bind -allow {} -ip 127.203.7.1 -port 30010\n  server 10.1.1.1 21\n  allow 192.0.2.1\n}"},
		{name: "listen bad clause", body: "XLAT::listen 30 {\n  proto 6\n  sever 10.1.1.1 21\n}", err: `:4:3: XLAT::listen: bad clause "sever"`},
		{name: "listen bad clause on one line", body: "XLAT::listen 30 {proto 6; server 10.1.1.1}", err: `:2:27: XLAT::listen: server takes ADDR PORT`},
		{name: "listen bad protocol", body: "XLAT::listen 30 {\n  proto icmp\n  server 10.1.1.1 21\n}", err: `:3:3: XLAT::listen: protocol "icmp"`},
		{name: "listen no server", body: `XLAT::listen 30 {proto 6}`, err: `:2:17: XLAT::listen: no server`},
		{name: "listen substituted clause", body: `XLAT::listen 30 {proto [IP::protocol]; server $addr 21}`},
		{name: "listen bad option", body: `XLAT::listen -single 30 {server 10.1.1.1 21}`, err: `:2:14: XLAT::listen: bad option "-single"`},
		{name: "listen arity", body: `XLAT::listen {server 10.1.1.1 21}`, err: `:2:1: wrong # args: should be "XLAT::listen`},
		{name: "listen hairpin", body: `XLAT::listen -hairpin 30 {server 10.1.1.1 21}`, unsupported: "XLAT::listen -hairpin"},
		{name: "listen inherit-vs", body: `XLAT::listen 30 {server 10.1.1.1 21; inherit-vs}`, unsupported: "XLAT::listen inherit-vs"},
		{name: "listen_lifetime handle", body: `XLAT::listen_lifetime h 30`, err: `:2:23: XLAT::listen_lifetime: "h" is not a listener handle`},
		{name: "listen_lifetime", body: `XLAT::listen_lifetime $h 30`},
		{name: "reservation create", body: `XLAT::src_endpoint_reservation create -no-persist -pool cgnat -translation-strict 127.203.7.1 30008 10.1.1.1 5000 udp 60`},
		{name: "reservation bad option", body: `XLAT::src_endpoint_reservation create -persist 10.1.1.1 5000 udp 60`, err: `:2:39: XLAT::src_endpoint_reservation: bad option "-persist"`},
		{name: "reservation translation port", body: `XLAT::src_endpoint_reservation create -translation-loose 127.203.7.1 http 10.1.1.1 5000 udp 60`, err: `:2:70: XLAT::src_endpoint_reservation: -translation-loose port "http" is not a port`},
		{name: "reservation arity", body: `XLAT::src_endpoint_reservation create 10.1.1.1 5000 udp`, err: `:2:1: wrong # args`},
		{name: "reservation get", body: `XLAT::src_endpoint_reservation get 127.203.7.1 30008 cgnat tcp`},
		{name: "reservation update arity", body: `XLAT::src_endpoint_reservation update_lifetime 127.203.7.1 30008 cgnat tcp`, err: `:2:1: wrong # args`},
		{name: "reservation dslite", body: `XLAT::src_endpoint_reservation create -dslite 2001:db8::1 10.1.1.1 5000 udp 60`, unsupported: "XLAT::src_endpoint_reservation -dslite"},
		{name: "LSN::pool arity", body: `LSN::pool`, err: `:2:1: wrong # args: should be "LSN::pool pool_name"`},
		{name: "LSN::address", body: `LSN::address 127.203.7.256`, err: `:2:14: LSN::address: "127.203.7.256" is not an IP address`},
		{name: "LSN::port", body: `LSN::port 0`, err: `:2:11: LSN::port: "0" is not a port`},
		{name: "LSN::persistence mode", body: `LSN::persistence sticky 30`, err: `:2:18: LSN::persistence: "sticky" is not none`},
		{name: "LSN::persistence arity", body: `LSN::persistence address`, err: `:2:1: wrong # args`},
		{name: "LSN::inbound", body: `LSN::inbound off`, err: `:2:14: LSN::inbound: bad option "off"`},
		{name: "LSN::disable arity", body: `LSN::disable now`, err: `:2:1: wrong # args: should be "LSN::disable"`},
		{name: "LSN:: steering", body: "LSN::pool cgnat; LSN::address 127.203.7.1; LSN::port 30001; LSN::persistence none; LSN::inbound enable; LSN::disable"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := Compile("/Common/lsn", "when CLIENT_ACCEPTED {\n"+c.body+"\n}")
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			var names []string
			if r != nil {
				names = r.Unsupported()
			}
			if c.unsupported != "" {
				if len(names) != 1 || names[0] != c.unsupported {
					t.Fatalf("unsupported %q (error %v), want %q", names, err, c.unsupported)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
