package rules

import (
	"io"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// routeAddr is the destination the ROUTE:: tests make metrics for.
const routeAddr = "127.124.0.1"

// routeConnect makes and closes real connections to routeAddr, so that
// the kernel caches metrics for it.
func routeConnect(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", routeAddr+":0")
	if err != nil {
		t.Skipf("cannot listen on %s: %v", routeAddr, err)
	}
	// The echoing side's close writes metrics for routeAddr too (its
	// peer is routeAddr as well): wait for every echo to end before
	// returning, so that no close lands after a caller's ROUTE::clear.
	var echoes sync.WaitGroup
	defer echoes.Wait()
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			echoes.Add(1)
			go func() {
				defer echoes.Done()
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				io.Copy(c, c)
			}()
		}
	}()
	for i := 0; i < 3; i++ {
		c, err := net.DialTimeout("tcp", ln.Addr().String(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		buf := make([]byte, 64<<10)
		for k := 0; k < 20; k++ {
			if _, err := c.Write(buf); err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadFull(c, buf); err != nil {
				t.Fatal(err)
			}
		}
		c.Close() // the active close writes the metrics
	}
}

func TestRouteCommands(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("ROUTE:: reads Linux's tcp_metrics")
	}
	// Errors and fixed answers first.
	for _, c := range []struct{ script, want, wantErr string }{
		{"ROUTE::domain", "0", ""},
		{"ROUTE::rtt 127.124.9.9", "0", ""},
		{"ROUTE::cwnd 127.124.9.9 127.124.9.1", "0", ""},
		{"ROUTE::age 127.124.9.9%0", "0", ""},
		{"ROUTE::expiration 127.124.9.9", "0", ""},
		{"ROUTE::bandwidth 127.124.9.9", "0", ""},
		{"ROUTE::rtt nonsense", "", `ROUTE::rtt: invalid IP address "nonsense"`},
		{"ROUTE::rtt 127.124.0.1 bad", "", `ROUTE::rtt: invalid IP address "bad"`},
		{"ROUTE::rttvar", "", "wrong # args"},
	} {
		got, err := asn1Eval(t, "", c.script)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: error %v, want %q", c.script, err, c.wantErr)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s = %q, %v; want %q", c.script, got, err, c.want)
		}
	}

	if _, err := asn1Eval(t, "", "ROUTE::clear "+routeAddr); err != nil {
		t.Skipf("cannot clear the kernel's tcp_metrics (needs CAP_NET_ADMIN): %v", err)
	}
	if got, _ := asn1Eval(t, "", "ROUTE::rtt "+routeAddr); got != "0" {
		t.Fatalf("ROUTE::rtt after ROUTE::clear = %s, want 0", got)
	}
	var fields []string
	deadline := time.Now().Add(20 * time.Second)
	for try := 0; try < 10 && time.Now().Before(deadline); try++ {
		routeConnect(t)
		got, err := asn1Eval(t, "", "list [ROUTE::rtt "+routeAddr+"] [ROUTE::rttvar "+routeAddr+"] [ROUTE::cwnd "+routeAddr+
			"] [ROUTE::bandwidth "+routeAddr+"] [ROUTE::age "+routeAddr+"] [ROUTE::expiration "+routeAddr+" 127.124.0.254]")
		if err != nil {
			t.Fatal(err)
		}
		fields = strings.Fields(got)
		if fields[0] != "0" && fields[2] != "0" {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	n := make([]int64, len(fields))
	for i, f := range fields {
		n[i], _ = strconv.ParseInt(f, 10, 64)
	}
	if len(n) != 6 || n[0] <= 0 || n[2] <= 0 {
		t.Fatalf("no metrics cached for %s after real connections: rtt rttvar cwnd bandwidth age expiration = %v", routeAddr, fields)
	}
	// cwnd is in bytes: a whole number of the path's segments, the
	// loopback interface's MTU less the headers.
	mtuS, err := asn1Eval(t, "", "ROUTE::mtu "+routeAddr)
	mtu, _ := strconv.ParseInt(mtuS, 10, 64)
	if err != nil || mtu < 1280 {
		t.Fatalf("ROUTE::mtu %s = %q, %v", routeAddr, mtuS, err)
	}
	if n[2]%(mtu-40) != 0 {
		t.Errorf("ROUTE::cwnd %d is not whole segments of %d bytes", n[2], mtu-40)
	}
	if n[3] <= 0 {
		t.Errorf("ROUTE::bandwidth %d with rtt %d and cwnd %d", n[3], n[0], n[2])
	}
	if n[4] < 0 || n[4] > 60 || n[5] < 3600-60 || n[5] > 3600 {
		t.Errorf("ROUTE::age %d, ROUTE::expiration %d: want a fresh entry", n[4], n[5])
	}
	// A connection's last ACK can still be on its way through the
	// kernel after both sides closed; an entry it writes back after the
	// clear is cleared again, a bounded number of times.
	got := ""
	for try := 0; try < 5; try++ {
		if _, err := asn1Eval(t, "", "ROUTE::clear "+routeAddr); err != nil {
			t.Fatal(err)
		}
		if got, _ = asn1Eval(t, "", "ROUTE::cwnd "+routeAddr); got == "0" {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if got != "0" {
		t.Errorf("ROUTE::cwnd after ROUTE::clear = %s, want 0", got)
	}
}
