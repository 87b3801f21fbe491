package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/cluster/etcdtest"
	"github.com/openltm/openltm/cluster/trust"
)

// BenchmarkDeviceGroup30000Objects measures config sync of a large
// configuration between two ltmd processes: the initial sync of 30,000
// objects (15,000 nodes and pools) and then, per iteration, one change
// committed on one device until the other lists it. It reports
// commit-ms (the commit, group transaction included) and applied-ms (the
// commit's start until the other device lists the change).
func BenchmarkDeviceGroup30000Objects(b *testing.B) {
	root := b.TempDir()
	dom, err := trust.NewDomain("Root")
	if err != nil {
		b.Fatal(err)
	}
	srv := etcdtest.Start(b, etcdtest.Options{Dir: filepath.Join(root, "etcd")})
	creds := filepath.Join(root, "admin")
	if err := os.WriteFile(creds, []byte("admin:admin\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	mport := freePort(b)
	var devs []*device
	for i, name := range []string{"bigipA", "bigipB"} {
		d := &device{name: name, ip: fmt.Sprintf("127.0.0.%d", i+1), sock: filepath.Join(root, name+".sock")}
		state := filepath.Join(root, name)
		if i == 0 {
			ca, _ := dom.KeyPEM()
			if err := os.MkdirAll(filepath.Join(state, "cluster"), 0o700); err != nil {
				b.Fatal(err)
			}
			os.WriteFile(filepath.Join(state, "cluster", "ca.crt"), dom.CertPEM(), 0o644)
			os.WriteFile(filepath.Join(state, "cluster", "ca.key"), ca, 0o600)
		}
		d.args = []string{"--state-dir", state, "--socket", d.sock, "--cluster-endpoints", strings.Join(srv.Endpoints(), ","),
			"--management-address", net.JoinHostPort(d.ip, mport), "--admin-credentials", creds}
		d.stderr = &syncBuffer{}
		d.start(b)
		dd := d
		b.Cleanup(func() {
			dd.c.Close()
			dd.cmd.Process.Kill()
			dd.cmd.Wait()
		})
		devs = append(devs, d)
	}
	a, peer := devs[0], devs[1]
	for _, d := range devs {
		d.exec(b, "mv cm device bigip1 to "+d.name)
	}
	eventually(b, "trust", func() error {
		_, err := a.try("modify cm trust-domain Root ca-devices add { 127.0.0.2 } name bigipB username admin password admin")
		return err
	})
	a.exec(b, "create cm device-group dg1 devices add { bigipA bigipB } type sync-failover auto-sync enabled")
	var sb strings.Builder
	for i := range 15000 {
		ip := fmt.Sprintf("10.%d.%d.%d", i/65536, (i/256)%256, i%256)
		fmt.Fprintf(&sb, "ltm node n%d { address %s }\nltm pool p%d { members { n%d:80 { address %s } } }\n", i, ip, i, i, ip)
	}
	f := filepath.Join(root, "big.conf")
	if err := os.WriteFile(f, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	a.exec(b, "load sys config merge file "+f)
	for _, d := range devs {
		eventually(b, d.name+" joins", func() error {
			if p := d.c.Prompt(); p.SyncStatus == "" || p.SyncStatus == "Standalone" {
				return fmt.Errorf("prompt says %q", p.SyncStatus)
			}
			return nil
		})
	}
	start := time.Now()
	a.exec(b, "run cm config-sync to-group dg1")
	eventually(b, "bigipB has the 30,000 objects", func() error {
		_, err := peer.try("list ltm pool p14999")
		return err
	})
	b.Logf("initial sync of 30,000 objects: %v", time.Since(start))
	var commit, applied time.Duration
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		a.exec(b, fmt.Sprintf("create ltm pool extra%d", i))
		commit += time.Since(start)
		for deadline := time.Now().Add(time.Minute); ; {
			if _, err := peer.try(fmt.Sprintf("list ltm pool extra%d", i)); err == nil {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("bigipB never listed extra%d", i)
			}
			time.Sleep(5 * time.Millisecond)
		}
		applied += time.Since(start)
	}
	b.ReportMetric(float64(commit.Milliseconds())/float64(b.N), "commit-ms")
	b.ReportMetric(float64(applied.Milliseconds())/float64(b.N), "applied-ms")
}
