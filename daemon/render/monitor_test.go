package render

import (
	"bytes"
	"net/netip"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane"
)

func TestMonitor(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	probes := []dataplane.MonitorProbe{
		{Monitor: "/Common/m", Destination: netip.MustParseAddrPort("10.1.1.1:80"), Pool: "/Common/p", Object: "/Common/10.1.1.1:80",
			Status: "up", Since: now.Add(-(time.Hour + 2*time.Minute + 3*time.Second))},
		{Monitor: "/Common/m", Destination: netip.MustParseAddrPort("10.1.1.2:80"), Object: "/Common/10.1.1.2",
			Status: "down", Since: now.Add(-61 * time.Second), LastError: "Unable to connect"},
	}
	var b bytes.Buffer
	if err := Monitor(&b, "/Common/m", probes, now, Options{Folder: "/Common"}); err != nil {
		t.Fatal(err)
	}
	want := `---------------------------------------------------------------------
Ltm::Monitor: m
---------------------------------------------------------------------
  Destination:  10.1.1.1:80
  Pool Member:  p 10.1.1.1:80
  State time:   up for 1hr:2mins:3sec
  |  Last error:  N/A

  Destination:  10.1.1.2:80
  Node:         10.1.1.2
  State time:   down for 0hrs:1min:1sec
  |  Last error:  Unable to connect
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	Monitor(&b, "/Common/idle", nil, now, Options{Folder: "/Common"})
	if !bytes.Contains(b.Bytes(), []byte("no instances")) {
		t.Errorf("a monitor without instances:\n%s", b.String())
	}
}
