package daemon

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"
)

// The virtual address's enabled and connection-limit reach its virtual
// servers; one that does neither is left out; bad values are refused.
func TestVirtualAddressTranslated(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.76.6.10:9000 }",
		"create ltm virtual v1 destination 127.76.6.1:80 pool p",
		"create ltm virtual v2 destination 127.76.6.1:81 pool p",
		"create ltm virtual v3 destination 127.76.6.2:80 pool p",
		"create ltm virtual-address other address 127.76.6.3 connection-limit 7",
		"create ltm virtual v4 destination 127.76.6.3:80 pool p",
		"modify ltm virtual-address 127.76.6.1 enabled no connection-limit 5",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	dc, _ := Translate(e.schema, e.Config())
	for _, n := range []string{"/Common/v1", "/Common/v2"} {
		a := dc.Virtuals[n].Address
		if a == nil || a.Name != "/Common/127.76.6.1" || a.Enabled || a.ConnectionLimit != 5 {
			t.Fatalf("%s: address %+v", n, a)
		}
	}
	if a := dc.Virtuals["/Common/v3"].Address; a != nil {
		t.Fatalf("an address that does not act: %+v", a)
	}
	if a := dc.Virtuals["/Common/v4"].Address; a == nil || a.Name != "/Common/other" || !a.Enabled || a.ConnectionLimit != 7 {
		t.Fatalf("an address object under another name: %+v", a)
	}
	for _, c := range []struct{ cmd, err string }{
		{"modify ltm virtual-address 127.76.6.1 enabled maybe", `"maybe"`},
		{"modify ltm virtual-address 127.76.6.1 connection-limit lots", "connection-limit"},
	} {
		if _, err := run(t, s, c.cmd); err == "" || !strings.Contains(err, c.err) {
			t.Errorf("%s: %q, want an error naming %s", c.cmd, err, c.err)
		}
	}
	out, _ := run(t, s, "list ltm virtual-address 127.76.6.1")
	if !strings.Contains(out, "connection-limit 5") || !strings.Contains(out, "enabled no") {
		t.Fatalf("list after the refusals:\n%s", out)
	}
}

// With a running dataplane: a disabled address resets its virtuals'
// clients and shows them disabled-by-parent; its connection-limit holds
// across its virtuals and shows the address unavailable.
func TestVirtualAddressShow(t *testing.T) {
	ln, err := net.Listen("tcp", "127.76.7.10:9000")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for i := 0; i < 50; i++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for j := 0; j < 20; j++ {
					if _, err := r.ReadString('\n'); err != nil {
						return
					}
					c.Write([]byte("ok\n"))
				}
			}()
		}
	}()
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	do := func(cmds ...string) {
		t.Helper()
		for _, c := range cmds {
			if _, err := run(t, s, c); err != "" {
				t.Fatalf("%s: %s", c, err)
			}
		}
	}
	ask := func(vs string) (*net.TCPConn, error) {
		c, err := net.DialTimeout("tcp", vs, 2*time.Second)
		if err != nil {
			return nil, err
		}
		c.SetDeadline(time.Now().Add(3 * time.Second))
		if _, err := c.Write([]byte("hi\n")); err != nil {
			c.Close()
			return nil, err
		}
		if _, err := bufio.NewReader(c).ReadString('\n'); err != nil {
			c.Close()
			return nil, err
		}
		return c.(*net.TCPConn), nil
	}
	do("create ltm pool p members add { 127.76.7.10:9000 }",
		"create ltm virtual v1 destination 127.76.7.1:80 pool p",
		"create ltm virtual v2 destination 127.76.7.1:81 pool p",
		"modify ltm virtual-address 127.76.7.1 enabled no")
	if c, err := ask("127.76.7.1:81"); err == nil {
		c.Close()
		t.Fatal("a virtual on a disabled address answered")
	}
	out, _ := run(t, s, "show ltm virtual v2")
	if !strings.Contains(out, "  State            : disabled-by-parent\n") || !strings.Contains(out, ", its virtual address is disabled\n") {
		t.Fatalf("show ltm virtual v2:\n%s", out)
	}
	do("modify ltm virtual-address 127.76.7.1 enabled yes connection-limit 1")
	held, err := ask("127.76.7.1:80")
	if err != nil {
		t.Fatalf("under the limit: %v", err)
	}
	defer held.Close()
	if c, err := ask("127.76.7.1:81"); err == nil {
		c.Close()
		t.Fatal("a second connection on an address limited to 1 answered")
	}
	out, _ = run(t, s, "show ltm virtual-address 127.76.7.1")
	for _, want := range []string{"  Availability : unavailable\n", "  Reason       : The virtual address has reached its connection limit\n",
		"  Limit-Reset Connections       1\n", "  Current Connections           1\n"} {
		if !strings.Contains(out, want) {
			t.Fatalf("want %q in\n%s", want, out)
		}
	}
	out, _ = run(t, s, "show ltm virtual v2")
	if !strings.Contains(out, "  Availability     : unavailable\n") || !strings.Contains(out, "  Reason           : The virtual address has reached its connection limit\n") {
		t.Fatalf("show ltm virtual v2 at the address's limit:\n%s", out)
	}
	held.Close()
	ok := false
	for i := 0; i < 100 && !ok; i++ {
		if c, err := ask("127.76.7.1:81"); err == nil {
			c.Close()
			ok = true
		} else {
			time.Sleep(20 * time.Millisecond)
		}
	}
	if !ok {
		t.Fatal("no room again after the held connection closed")
	}
}
