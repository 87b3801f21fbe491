package render

import (
	"bytes"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/persist"
	"github.com/openltm/openltm/objects/store"
)

func TestHistory(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local)
	long := "modify ltm pool p members add { 10.0.0.1:80 10.0.0.2:80 10.0.0.3:80 10.0.0.4:80 }"
	var b bytes.Buffer
	if err := History(&b, []store.Info{
		{ID: 1, Time: at, User: "admin", Summary: "create ltm pool p"},
		{ID: 2, Time: at, User: "root", Summary: long + "\ndelete ltm pool q\ncreate ltm node n"},
	}, 2); err != nil {
		t.Fatal(err)
	}
	want := "Sys::Config History\n" +
		"Generation  Time                 User   Change\n" +
		"1           2026-01-02 03:04:05  admin  create ltm pool p\n" +
		"2*          2026-01-02 03:04:05  root   " + long[:57] + "... (+2 more)\n" +
		"Total records returned: 2\n"
	diff(t, b.String(), want)

	b.Reset()
	if err := Generation(&b, store.Generation{ID: 2, Time: at, User: "root", Summary: "a\nb"}); err != nil {
		t.Fatal(err)
	}
	diff(t, b.String(), "Generation 2\n  Time  2026-01-02 03:04:05\n  User  root\n  Change\n    a\n    b\n")

	b.Reset()
	if err := HistoryDiff(&b, store.Generation{ID: 1, Config: "x\n"}, store.Generation{ID: 3, Config: "y\n"}); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"--- generation 1", "+++ generation 3", "-x", "+y"} {
		if !strings.Contains(b.String(), line+"\n") {
			t.Errorf("diff lacks %q:\n%s", line, b.String())
		}
	}
}

func TestProfileBlocks(t *testing.T) {
	o := Options{Folder: "/Common"}
	var b bytes.Buffer
	if err := OneConnectProfile(&b, "/Common/oc", mblb.OneConnectStats{CurrentIdle: 2, Maximum: 5, TotalReuses: 1234567, New: 9}, o); err != nil {
		t.Fatal(err)
	}
	diff(t, b.String(), "---------------------------\n"+
		"Ltm::OneConnect Profile: oc\n"+
		"---------------------------\n"+
		"Virtual Server Name   N/A\n"+
		"Connections\n"+
		"Current Idle          2\n"+
		"Maximum               5\n"+
		"Total Reuses    1234567\n"+
		"New                   9\n\n")

	b.Reset()
	if err := MBLBProfile(&b, "/Other/m", dataplane.MBLBStats{}, o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "Ltm::MBLB Profile: /Other/m\n") || !strings.Contains(b.String(), "\nClient Resets") {
		t.Errorf("mblb block:\n%s", b.String())
	}
}

func TestPersistWriter(t *testing.T) {
	var b bytes.Buffer
	pw := NewPersistWriter(&b)
	for _, r := range []persist.Record{
		{Key: persist.Key{Mode: persist.SourceAddress, Addr: netip.MustParseAddr("10.1.1.1")},
			VirtualAddr: netip.MustParseAddrPort("10.0.0.10:80"), Member: netip.MustParseAddrPort("10.0.0.11:80")},
		{Key: persist.Key{Mode: persist.SourceAddress, Addr: netip.MustParseAddr("fd00::1")},
			VirtualAddr: netip.MustParseAddrPort("[fd00::10]:0"), Member: netip.MustParseAddrPort("[fd00::11]:8080")},
	} {
		if err := pw.Write(&r); err != nil {
			t.Fatal(err)
		}
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	diff(t, b.String(), "Sys::Persistent Connections\n"+
		"source-address  10.1.1.1  10.0.0.10:80  10.0.0.11:80  (tmm: 0)\n"+
		"source-address  fd00::1  fd00::10.any  fd00::11.8080  (tmm: 0)\n"+
		"Total records returned: 2\n")
}

func TestPersistWriterAllProperties(t *testing.T) {
	var b bytes.Buffer
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	pw := NewPersistWriterAll(&b, now, "/Common")
	r := persist.Record{Key: persist.Key{Mode: persist.SourceAddress, Addr: netip.MustParseAddr("10.1.1.1")},
		Virtual: "/Common/vs", VirtualAddr: netip.MustParseAddrPort("10.0.0.10:80"), Pool: "/Common/web",
		Member: netip.MustParseAddrPort("10.0.0.11:80"), Client: netip.MustParseAddr("10.1.1.1"), Used: now.Add(-42 * time.Second)}
	if err := pw.Write(&r); err != nil {
		t.Fatal(err)
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	diff(t, b.String(), `Sys::Persistent Connections
source-address - 10.0.0.10:80 - 10.0.0.11:80
  TMM           0
  Mode          source-address
  Key           10.1.1.1
  Age (sec.)    42
  Virtual Name  vs
  Virtual Addr  10.0.0.10:80
  Node Addr     10.0.0.11:80
  Pool Name     web
  Client Addr   10.1.1.1
Total records returned: 1
`)
}
