package transcripts

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/openltm/openltm/cluster/etcdtest"
	"github.com/openltm/openltm/cluster/trust"
	"github.com/rogpeppe/go-internal/testscript"
)

// etcdKey holds a script's etcd (one per script, stopped when it ends).
type etcdKey struct{}

type etcdHolder struct{ srv *etcdtest.Server }

// setupEtcd gives each script a place for its etcd and stops it at the end.
func setupEtcd(e *testscript.Env) {
	h := &etcdHolder{}
	e.Values[etcdKey{}] = h
	e.Defer(func() {
		if h.srv != nil {
			h.srv.Close()
		}
	})
}

// etcd start [HOST]|stop|restart: a real single-member etcd (embedded) on
// loopback (HOST, 127.0.0.1 by default), with its data in $WORK/etcd.
// start sets $ETCD to its client URL; stop and restart keep the data and
// the address, as an outage does.
func cmdEtcd(ts *testscript.TestScript, neg bool, args []string) {
	host := ""
	if len(args) == 2 && args[0] == "start" {
		host, args = args[1], args[:1]
	}
	if len(args) != 1 || neg {
		ts.Fatalf("usage: etcd start [HOST]|stop|restart")
	}
	h := ts.Value(etcdKey{}).(*etcdHolder)
	switch args[0] {
	case "start":
		if h.srv != nil {
			ts.Fatalf("etcd start: already started")
		}
		srv, err := etcdtest.Launch(etcdtest.Options{Dir: filepath.Join(ts.Getenv("WORK"), "etcd"), Host: host})
		ts.Check(err)
		h.srv = srv
		ts.Setenv("ETCD", strings.Join(srv.Endpoints(), ","))
	case "stop":
		if h.srv == nil {
			ts.Fatalf("etcd stop: not started")
		}
		h.srv.Stop()
	case "restart":
		if h.srv == nil {
			ts.Fatalf("etcd restart: not started")
		}
		ts.Check(h.srv.Restart())
	default:
		ts.Fatalf("usage: etcd start [HOST]|stop|restart")
	}
}

// trustdomain DIR: make a trust domain's CA (ca.crt, ca.key) in DIR, the
// cluster directory of the device that will add the others to it.
func cmdTrustDomain(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: trustdomain DIR")
	}
	dom, err := trust.NewDomain("Root")
	ts.Check(err)
	key, err := dom.KeyPEM()
	ts.Check(err)
	dir := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(dir, 0o700))
	ts.Check(os.WriteFile(filepath.Join(dir, "ca.crt"), dom.CertPEM(), 0o644))
	ts.Check(os.WriteFile(filepath.Join(dir, "ca.key"), key, 0o600))
}

// freeport NAME IP...: set NAME to a port free for TCP and UDP on every IP
// (the devices' management port and heartbeat port must be the same on
// all of them).
func cmdFreePort(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 || neg {
		ts.Fatalf("usage: freeport NAME IP...")
	}
	for range 50 {
		ln, err := net.Listen("tcp", net.JoinHostPort(args[1], "0"))
		ts.Check(err)
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		if portFree(args[1:], port) {
			ts.Setenv(args[0], strconv.Itoa(port))
			return
		}
	}
	ts.Fatalf("freeport: no port free on %v", args[1:])
}

func portFree(ips []string, port int) bool {
	for _, ip := range ips {
		addr := net.JoinHostPort(ip, strconv.Itoa(port))
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return false
		}
		ln.Close()
		pc, err := net.ListenPacket("udp", addr)
		if err != nil {
			return false
		}
		pc.Close()
	}
	return true
}
