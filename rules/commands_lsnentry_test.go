package rules

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// fakeTables records what the commands ask of the lsn pools' tables.
type fakeTables struct {
	calls   []string
	entries map[netip.AddrPort]LSNEntryInfo
}

func (f *fakeTables) AddEntry(pool string, e LSNEntry) (netip.AddrPort, error) {
	if pool != "/Common/cgnat" && pool != "cgnat" {
		return netip.AddrPort{}, errors.New("no lsn pool of that name")
	}
	at := e.At
	if !at.IsValid() {
		at = netip.MustParseAddrPort("127.198.7.1:30001")
	}
	f.calls = append(f.calls, fmt.Sprintf("add %d %s %s udp=%v life=%s loose=%v override=%v allow=%s single=%v nopersist=%v",
		e.Kind, e.Client, at, e.UDP, e.Life, e.Loose, e.Override, e.Allow, e.Single, e.NoPersist))
	f.entries[at] = LSNEntryInfo{Kind: e.Kind, Pool: "/Common/cgnat", At: at, Client: e.Client, Left: e.Life}
	return at, nil
}

func (f *fakeTables) Entry(at netip.AddrPort, udp bool) (LSNEntryInfo, bool) {
	e, ok := f.entries[at]
	return e, ok
}

func (f *fakeTables) SetEntryLife(at netip.AddrPort, udp bool, life time.Duration) bool {
	f.calls = append(f.calls, fmt.Sprintf("life %s %s", at, life))
	return true
}

func (f *fakeTables) Inbound(at netip.AddrPort, udp bool) (netip.AddrPort, bool) {
	if e, ok := f.entries[at]; ok {
		return e.Client, true
	}
	return netip.AddrPort{}, false
}

func (f *fakeTables) DeleteInbound(at netip.AddrPort, udp bool) bool {
	f.calls = append(f.calls, fmt.Sprintf("delete inbound %s udp=%v", at, udp))
	return true
}

func (f *fakeTables) PersistEntry(pool string, client, to netip.AddrPort, ttl time.Duration, override bool) (netip.AddrPort, error) {
	f.calls = append(f.calls, fmt.Sprintf("persist %s %s %s %s override=%v", pool, client, to, ttl, override))
	return to, nil
}

func (f *fakeTables) Persistence(client netip.AddrPort) (netip.AddrPort, bool) {
	if client.Addr() == netip.MustParseAddr("10.1.1.1") {
		return netip.MustParseAddrPort("127.198.7.1:30009"), true
	}
	return netip.AddrPort{}, false
}

func (f *fakeTables) DeletePersistence(client netip.AddrPort) bool {
	f.calls = append(f.calls, "delete persist "+client.String())
	return true
}

func TestLSNEntryCommands(t *testing.T) {
	lsnFlow := func() Conn {
		return &fakeXLATConn{fakeConn: newFakeConn(), src: netip.MustParseAddrPort("127.198.7.1:30007"), picked: true, typ: "LSN", object: "/Common/cgnat"}
	}
	cases := []struct {
		name, body string
		conn       Conn
		log, call  string // call: the last one recorded
		err        string
	}{
		{name: "inbound create", body: `log local0. [LSN::inbound-entry create -override cgnat 60 10.1.1.1:5000 127.198.7.1:30002 UDP]`,
			log: "127.198.7.1:30002", call: "add 0 10.1.1.1:5000 127.198.7.1:30002 udp=true life=1m0s loose=false override=true allow=invalid AddrPort single=false nopersist=false"},
		{name: "inbound create, the pool's choice", body: `log local0. [LSN::inbound-entry create -mirror cgnat 5 10.1.1.1:5000 0.0.0.0:0 tcp]`,
			log: "127.198.7.1:30001"},
		{name: "inbound get", body: `LSN::inbound-entry create cgnat 5 10.1.1.1:5000 127.198.7.1:30003 tcp; log local0. [LSN::inbound-entry get 127.198.7.1:30003 tcp]`,
			log: "10.1.1.1 5000 0"},
		{name: "inbound get of none", body: `log local0. "<[LSN::inbound-entry get 127.198.7.1:30004 tcp]>"`, log: "<>"},
		{name: "inbound delete", body: `LSN::inbound-entry delete 127.198.7.1:30004 udp`, call: "delete inbound 127.198.7.1:30004 udp=true"},
		{name: "inbound bad protocol", body: `LSN::inbound-entry get 127.198.7.1:30004 [set p sctp]`, err: `protocol "sctp" is not tcp or udp`},
		{name: "inbound without port", body: `LSN::inbound-entry get [set a 127.198.7.1] tcp`, err: "has no port"},
		{name: "inbound dslite", body: `LSN::inbound-entry create [set o -dslite] ::1 ::2 cgnat 5 10.1.1.1:5000 127.198.7.1:30003 tcp`, err: "no DS-Lite"},
		{name: "inbound no pool", body: `LSN::inbound-entry create other 5 10.1.1.1:5000 127.198.7.1:30003 tcp`, err: "no lsn pool of that name"},
		{name: "persistence create", body: `log local0. [LSN::persistence-entry create -override cgnat 10.1.1.2:4000 127.198.7.1:30005 90]`,
			log: "127.198.7.1:30005", call: "persist cgnat 10.1.1.2:4000 127.198.7.1:30005 1m30s override=true"},
		{name: "persistence create, the flow's pool", body: `log local0. [LSN::persistence-entry create 10.1.1.2 127.198.7.1]`, conn: lsnFlow(),
			log: "127.198.7.1", call: "persist /Common/cgnat 10.1.1.2:0 127.198.7.1:0 0s override=false"},
		{name: "persistence create without a pool", body: `LSN::persistence-entry create 10.1.1.2 127.198.7.1`, err: "no lsn pool named"},
		{name: "persistence get", body: `log local0. [LSN::persistence-entry get 10.1.1.1:4000]`, log: "127.198.7.1:30009"},
		{name: "persistence delete", body: `LSN::persistence-entry delete 10.1.1.1`, call: "delete persist 10.1.1.1:0"},
		{name: "listen", conn: lsnFlow(), body: `set h [XLAT::listen -single-connection 30 {
				proto [IP::protocol]
				bind -allow {} -ip 127.198.7.1 -port 30010
				server 10.1.1.1 21
				allow 192.0.2.1
			}]; log local0. $h`,
			log:  "127.198.7.1,30010,192.0.2.1,0,10.1.1.1,21,0,6",
			call: "add 1 10.1.1.1:21 127.198.7.1:30010 udp=false life=30s loose=false override=false allow=192.0.2.1:0 single=true nopersist=false"},
		{name: "listen lifetime", conn: lsnFlow(), body: `set h [XLAT::listen 30 {server 10.1.1.1 21}]; log local0. "[XLAT::listen_lifetime $h] [XLAT::listen_lifetime $h 45]"`,
			log: "30 45", call: "life 127.198.7.1:30001 45s"},
		{name: "listen off lsn", body: `XLAT::listen 30 {server 10.1.1.1 21}`, err: "not translated by an lsn pool"},
		{name: "listen hairpin", conn: lsnFlow(), body: `XLAT::listen [set o -hairpin] 30 {server 10.1.1.1 21}`, err: "-hairpin is not supported"},
		{name: "listen no server", conn: lsnFlow(), body: `XLAT::listen 30 "proto [set p 6]"`, err: "no server"},
		{name: "listen lifetime too long", conn: lsnFlow(), body: `XLAT::listen [set l 31536001] {server 10.1.1.1 21}`, err: "is not a number of seconds"},
		{name: "bad handle", body: `XLAT::listen_lifetime [set h nothing]`, err: "is not a listener handle"},
		{name: "reservation", conn: lsnFlow(), body: `log local0. [XLAT::src_endpoint_reservation create -translation-strict [XLAT::src_addr] [XLAT::src_port] 10.1.1.1 5000 TCP 120]`,
			log: "127.198.7.1 30007 /Common/cgnat 120", call: "add 2 10.1.1.1:5000 127.198.7.1:30007 udp=false life=2m0s loose=false override=false allow=invalid AddrPort single=false nopersist=false"},
		{name: "reservation get and update", body: `XLAT::src_endpoint_reservation create -no-persist -pool cgnat -translation-loose 127.198.7.1 30008 10.1.1.1 5000 udp 60
			log local0. "[XLAT::src_endpoint_reservation get 127.198.7.1 30008 cgnat UDP] [XLAT::src_endpoint_reservation update_lifetime 127.198.7.1 30008 /Common/cgnat UDP 10]"`,
			log: "10.1.1.1 5000 60 10", call: "life 127.198.7.1:30008 10s"},
		{name: "reservation of another pool", body: `XLAT::src_endpoint_reservation create -pool cgnat 10.1.1.1 5000 udp 60
			log local0. "<[XLAT::src_endpoint_reservation get 127.198.7.1 30001 other UDP]>"`, log: "<>"},
		{name: "reservation dslite", body: `XLAT::src_endpoint_reservation create [set o -dslite] ::1 ::2 10.1.1.1 5000 udp 60`, err: "no DS-Lite"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := mustCompile(t, "entries", "when CLIENT_ACCEPTED { "+c.body+" }")
			if len(r.Unsupported()) != 0 {
				t.Fatalf("unsupported: %v", r.Unsupported())
			}
			var logged []string
			ft := &fakeTables{entries: map[netip.AddrPort]LSNEntryInfo{}}
			p := NewProgram(&Env{LSN: ft, Log: func(_, l string) { logged = append(logged, l) }}, r)
			conn := c.conn
			if conn == nil {
				conn = newFakeConn()
			}
			s := p.NewConnState(conn)
			err := s.Run(ClientAccepted)
			s.Release()
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.log != "" && (len(logged) != 1 || !strings.HasSuffix(logged[0], ": "+c.log)) {
				t.Fatalf("logged %q, want %q", logged, c.log)
			}
			if c.call != "" && (len(ft.calls) == 0 || ft.calls[len(ft.calls)-1] != c.call) {
				t.Fatalf("calls %q, want last %q", ft.calls, c.call)
			}
		})
	}
	// Without the pools' tables they are Tcl errors.
	r := mustCompile(t, "entries", `when CLIENT_ACCEPTED { LSN::persistence-entry get 10.1.1.1 }`)
	s := NewProgram(&Env{}, r).NewConnState(newFakeConn())
	if err := s.Run(ClientAccepted); err == nil || !strings.Contains(err.Error(), "no lsn pools") {
		t.Fatalf("without Env.LSN: %v", err)
	}
	s.Release()
}
