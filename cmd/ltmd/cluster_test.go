package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openltm/openltm/cluster/etcdtest"
	"github.com/openltm/openltm/cluster/trust"
	"github.com/openltm/openltm/control"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// device is one ltmd of the cluster test, in its own process.
type device struct {
	name, ip string
	sock     string
	args     []string
	cmd      *exec.Cmd
	stderr   *syncBuffer
	c        *control.Client
}

// start runs the device's ltmd and connects to it.
func (d *device) start(t testing.TB) {
	t.Helper()
	d.cmd = exec.Command(os.Args[0], d.args...)
	d.cmd.Env = append(os.Environ(), asLtmd+"=1")
	d.cmd.Stderr = d.stderr
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	eventually(t, d.name+" answers", func() error {
		c, err := control.Dial(d.sock)
		if err == nil {
			d.c = c
		}
		return err
	})
}

// syncBuffer is a bytes.Buffer the process's stderr copier and the test
// share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (d *device) exec(t testing.TB, line string) string {
	t.Helper()
	out, err := d.try(line)
	if err != nil {
		t.Fatalf("%s: %s: %v\n%s\nltmd log:\n%s", d.name, line, err, out, d.stderr)
	}
	return out
}

func (d *device) try(line string) (string, error) {
	var b strings.Builder
	err := d.c.Exec(context.Background(), line, &b)
	return b.String(), err
}

// eventually retries check every 50 ms until it passes or patience runs
// out.
func eventually(t testing.TB, what string, check func() error) time.Duration {
	t.Helper()
	start := time.Now()
	var err error
	for time.Since(start) < patience*2 {
		if err = check(); err == nil {
			return time.Since(start)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: %v", what, err)
	return 0
}

func freePort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, p, _ := net.SplitHostPort(ln.Addr().String())
	return p
}

// stablePort is a TCP port free on 127.0.0.1-3 and below the kernel's
// ephemeral range, for the addresses a device binds again after it was
// killed (its management and metrics addresses): a port from the
// ephemeral range may meanwhile be the local end of some outgoing
// connection (an etcd client, a test's), and the restarted device could
// not bind it (this failed once: "bind: address already in use" on the
// restart). stableUDPPort is the same for the heartbeats' UDP port.
func stablePort(t testing.TB, not ...string) string {
	t.Helper()
	return belowEphemeral(t, "tcp", not)
}

func stableUDPPort(t testing.TB, not ...string) string {
	t.Helper()
	return belowEphemeral(t, "udp", not)
}

func belowEphemeral(t testing.TB, network string, not []string) string {
	t.Helper()
	low := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		fmt.Sscan(string(b), &low)
	}
	if low <= 11000 {
		if network == "udp" {
			return freeUDPPort(t)
		}
		return freePort(t)
	}
	start := 10000 + int(time.Now().UnixNano()%int64(low-10000-100))
	for i := range 100 {
		p := fmt.Sprint(start + i)
		free := !slices.Contains(not, p)
		for _, ip := range []string{"127.0.0.1", "127.0.0.2", "127.0.0.3"} {
			if !free {
				break
			}
			var c io.Closer
			var err error
			if network == "udp" {
				c, err = net.ListenPacket("udp", net.JoinHostPort(ip, p))
			} else {
				c, err = net.Listen("tcp", net.JoinHostPort(ip, p))
			}
			if err != nil {
				free = false
				break
			}
			c.Close()
		}
		if free {
			return p
		}
	}
	t.Fatalf("no %s port free on 127.0.0.1-3 below the ephemeral range", network)
	return ""
}

// freeUDPPort is a UDP port free on 127.0.0.1-3, for the network failover
// heartbeats (BIG-IP's 1026 may be taken by another test on the machine).
func freeUDPPort(t testing.TB) string {
	t.Helper()
	for range 20 {
		c, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		_, p, _ := net.SplitHostPort(c.LocalAddr().String())
		free := true
		for _, ip := range []string{"127.0.0.2", "127.0.0.3"} {
			o, err := net.ListenPacket("udp", net.JoinHostPort(ip, p))
			if err != nil {
				free = false
				break
			}
			o.Close()
		}
		c.Close()
		if free {
			return p
		}
	}
	t.Fatal("no UDP port free on 127.0.0.1-3")
	return ""
}

// echoServer answers each connection with its name, then echoes.
func echoServer(t testing.TB, name string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				fmt.Fprintf(c, "%s\n", name)
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

// hello connects to addr and reads the backend's greeting.
func hello(addr string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 500*time.Millisecond)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(line), err
}

// TestDeviceGroupOfThree runs three ltmd processes on 127.0.0.1-3 against
// a TLS etcd whose CA is the trust domain's: the HA script as BIG-IP users
// write it (rename, trust with certificate exchange, device group, traffic
// group, initial sync), config sync both ways, two admins on two devices,
// and failover of a floating virtual server when the active ltmd is
// killed.
func TestDeviceGroupOfThree(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and three ltmd processes")
	}
	root, err := os.MkdirTemp("", "ltmd-cluster")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })

	// The trust domain's CA exists before etcd, which accepts only
	// certificates it issued; bigipA holds its key.
	dom, err := trust.NewDomain("Root")
	if err != nil {
		t.Fatal(err)
	}
	etcdID, err := dom.Issue("etcd", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	ef, err := etcdID.WriteFiles(filepath.Join(root, "etcd-tls"))
	if err != nil {
		t.Fatal(err)
	}
	srv := etcdtest.Start(t, etcdtest.Options{Dir: filepath.Join(root, "etcd"),
		TLS: &etcdtest.TLS{CertFile: ef.CertFile, KeyFile: ef.KeyFile, CAFile: ef.CAFile}})
	endpoints := strings.Join(srv.Endpoints(), ",")

	creds := filepath.Join(root, "admin")
	if err := os.WriteFile(creds, []byte("admin:admin\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mport := stablePort(t)
	metricsAddr := net.JoinHostPort("127.0.0.1", stablePort(t, mport))
	var devs []*device
	for i, name := range []string{"bigipA", "bigipB", "bigipC"} {
		d := &device{name: name, ip: fmt.Sprintf("127.0.0.%d", i+1), sock: filepath.Join(root, name+".sock")}
		state := filepath.Join(root, name)
		if i == 0 {
			ca, _ := dom.KeyPEM()
			if err := os.MkdirAll(filepath.Join(state, "cluster"), 0o700); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(state, "cluster", "ca.crt"), dom.CertPEM(), 0o644)
			os.WriteFile(filepath.Join(state, "cluster", "ca.key"), ca, 0o600)
		}
		args := []string{"--state-dir", state, "--socket", d.sock, "--cluster-endpoints", endpoints,
			"--management-address", net.JoinHostPort(d.ip, mport), "--admin-credentials", creds,
			"--failover-time", "2s", "--log-level", "debug"}
		if i == 0 {
			args = append(args, "--metrics-address", metricsAddr)
		}
		d.args, d.stderr = args, &syncBuffer{}
		d.start(t)
		dd := d
		t.Cleanup(func() {
			if dd.c != nil {
				dd.c.Close()
			}
			dd.cmd.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { dd.cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(patience):
				dd.cmd.Process.Kill()
				<-done
			}
			if t.Failed() || os.Getenv("OPENLTM_TEST_LOGS") != "" {
				t.Logf("%s log:\n%s", dd.name, dd.stderr)
			}
		})
		devs = append(devs, d)
	}
	a, b, c := devs[0], devs[1], devs[2]

	// The HA script, on every device and then on the CA holder; the
	// heartbeats go to a free port rather than BIG-IP's 1026.
	hbPort := stableUDPPort(t)
	for _, d := range devs {
		d.exec(t, "mv cm device bigip1 to "+d.name)
		d.exec(t, fmt.Sprintf("modify cm device %s configsync-ip %s unicast-address { { ip %s port %s } } mirror-ip %s", d.name, d.ip, d.ip, hbPort, d.ip))
	}
	// A device that is not trusted cannot be in a group.
	eventually(t, "bigipA connects", func() error {
		_, err := a.try("create cm device-group dg0 devices add { bigipA bigipB } type sync-failover")
		if err == nil || !strings.Contains(err.Error(), "not in the trust domain") {
			return fmt.Errorf("untrusted bigipB: %v", err)
		}
		return nil
	})
	if _, err := a.try("modify cm trust-domain Root ca-devices add { " + b.ip + " } name bigipB username admin password wrong"); err == nil ||
		!strings.Contains(err.Error(), "authentication failed") {
		t.Fatalf("trust with a wrong password: %v", err)
	}
	for _, d := range devs[1:] {
		out := a.exec(t, fmt.Sprintf("modify cm trust-domain Root ca-devices add { %s } name %s username admin password admin", d.ip, d.name))
		if !strings.Contains(out, "added to trust domain Root") {
			t.Fatalf("trust %s: %q", d.name, out)
		}
	}
	a.exec(t, "create cm device-group dg1 devices add { bigipA bigipB bigipC } type sync-failover auto-sync enabled network-failover enabled")
	a.exec(t, "modify cm traffic-group traffic-group-1 ha-order { bigipA bigipB bigipC }")
	backend := echoServer(t, "backend")
	vip := "127.0.9.9:" + freePort(t)
	a.exec(t, "create ltm pool web members add { "+backend+" }")
	a.exec(t, "create ltm virtual vs destination "+vip+" pool web")
	a.exec(t, "create net vlan internal")
	a.exec(t, "create net self float_self address 127.0.9.20/24 vlan internal traffic-group traffic-group-1")
	// bigipB and bigipC join once their certificates are installed.
	for _, d := range devs {
		eventually(t, d.name+" joins dg1", func() error {
			if p := d.c.Prompt(); p.SyncStatus == "" || p.SyncStatus == "Standalone" || p.SyncStatus == "Disconnected" {
				return fmt.Errorf("prompt says %q", p.SyncStatus)
			}
			return nil
		})
	}
	a.exec(t, "run cm config-sync to-group dg1")
	for _, d := range devs {
		eventually(t, d.name+" in sync", func() error {
			out, _ := d.try("show cm sync-status")
			if !strings.Contains(out, "In Sync") {
				return fmt.Errorf("%s", out)
			}
			return nil
		})
	}
	for _, d := range devs[1:] {
		if out := d.exec(t, "list ltm virtual vs"); !strings.Contains(out, vip) {
			t.Fatalf("%s did not receive the virtual: %q", d.name, out)
		}
		// Device-local objects stay local.
		if out := d.exec(t, "list cm device"); strings.Contains(out, "bigipA") {
			t.Fatalf("%s received bigipA's own device object: %q", d.name, out)
		}
	}

	// Only the active device serves the floating virtual address. On a
	// starved machine another device may win the first election (the
	// group does not fail back by itself, as on BIG-IP): that device is
	// then sent to standby, and ha-order makes bigipA the next.
	eventually(t, "bigipA active, the others standby", func() error {
		var got []string
		for _, d := range devs {
			got = append(got, d.c.Prompt().Failover)
		}
		if !slices.Equal(got, []string{"Active", "Standby", "Standby"}) {
			for i, want := range [][]string{nil, {"Standby", "Active", "Standby"}, {"Standby", "Standby", "Active"}} {
				if i > 0 && slices.Equal(got, want) {
					devs[i].try("run sys failover standby")
				}
			}
			return fmt.Errorf("failover states %v", got)
		}
		return nil
	})
	eventually(t, "the virtual answers", func() error {
		_, err := hello(vip)
		return err
	})
	// The floating self IP is bigipA's too.
	eventually(t, "bigipB shows bigipA holding the floating self IP", func() error {
		out, _ := b.try("show net self")
		if !regexp.MustCompile(`float_self +127\.0\.9\.20/24 +traffic-group-1 +yes +bigipA`).MatchString(out) {
			return fmt.Errorf("%s", out)
		}
		return nil
	})

	// Config sync the other way, and the commit-to-applied latency:
	// from the commit's return on bigipB until both others list the new
	// object (polled every 2 ms).
	var lat []time.Duration
	for i := range 9 {
		start := time.Now()
		b.exec(t, fmt.Sprintf("create ltm node n%d address 127.0.50.%d", i, i+1))
		committed := time.Since(start)
		for _, d := range []*device{a, c} {
			for deadline := time.Now().Add(patience); ; {
				if _, err := d.try(fmt.Sprintf("list ltm node n%d", i)); err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s never got n%d", d.name, i)
				}
				time.Sleep(2 * time.Millisecond)
			}
		}
		lat = append(lat, time.Since(start)-committed)
	}
	slices.Sort(lat)
	t.Logf("commit returned on bigipB to listed on bigipA and bigipC (9 samples): median %v, max %v", lat[4], lat[8])

	// Two admins on two devices commit at once: both changes land, in
	// one order everywhere.
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, d := range []*device{a, c} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 5 {
				if _, err := d.try(fmt.Sprintf("create ltm pool p_%s_%d", d.name, j)); err != nil {
					errs[i] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("concurrent commits: %v", err)
		}
	}
	for _, d := range devs {
		eventually(t, d.name+" has all ten pools", func() error {
			out, _ := d.try("list ltm pool one-line")
			if n := strings.Count(out, "ltm pool p_"); n != 10 {
				return fmt.Errorf("%d pools", n)
			}
			return nil
		})
	}

	// Metrics, once every device has reported the last generation.
	eventually(t, "metrics", func() error {
		resp, err := http.Get("http://" + metricsAddr + "/metrics")
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, want := range []string{`openltm_sync_status{group="dg1",status="In Sync"} 1`, `openltm_failover_active{traffic_group="traffic-group-1"} 1`,
			`openltm_virtual_info{destination=`, `openltm_commit_duration_seconds_count{scope="group"}`,
			`openltm_network_failover_peer_etcd{peer="bigipB"} 1`, `openltm_network_failover_peer_etcd{peer="bigipC"} 1`} {
			if !strings.Contains(string(body), want) {
				return fmt.Errorf("metrics lack %s", want)
			}
		}
		return nil
	})

	// Persistence with mirror enabled: eight clients persist to the two
	// members of a pool, and their records reach etcd for the standbys.
	backend2 := echoServer(t, "backend2")
	sticky := "127.0.9.10:" + freePort(t)
	a.exec(t, "create ltm persistence source-addr src_mirror mirror enabled timeout 600")
	a.exec(t, "create ltm pool sticky members add { "+backend+" "+backend2+" }")
	a.exec(t, "create ltm virtual vs_sticky destination "+sticky+" pool sticky persist replace-all-with { src_mirror }")
	var clients []string
	for i := range 8 {
		clients = append(clients, fmt.Sprintf("127.0.0.%d", 20+i))
	}
	helloFrom := func(src string) (string, error) {
		d := net.Dialer{Timeout: 500 * time.Millisecond, LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
		conn, err := d.Dial("tcp", sticky)
		if err != nil {
			return "", err
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(time.Second))
		line, err := bufio.NewReader(conn).ReadString('\n')
		return strings.TrimSpace(line), err
	}
	persisted := map[string]string{}
	for _, src := range clients {
		eventually(t, "vs_sticky answers "+src, func() error {
			got, err := helloFrom(src)
			persisted[src] = got
			return err
		})
	}
	for _, src := range clients {
		if got, err := helloFrom(src); err != nil || got != persisted[src] {
			t.Fatalf("client %s went to %q (%v), then to %q", src, persisted[src], err, got)
		}
	}
	watcher, err := dom.Issue("watcher")
	if err != nil {
		t.Fatal(err)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: srv.Endpoints(), DialTimeout: 5 * time.Second, TLS: watcher.ClientTLS()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	eventually(t, "the mirrored records reach etcd", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		resp, err := cli.Get(ctx, "/openltm/groups/dg1/persist/", clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil {
			return err
		}
		if resp.Count != int64(len(clients)) {
			return fmt.Errorf("%d records in etcd", resp.Count)
		}
		return nil
	})

	// Each device publishes its heartbeat addresses and the certificate
	// whose key signs its heartbeats.
	for _, d := range devs {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		resp, err := cli.Get(ctx, "/openltm/groups/dg1/m/state/"+d.name)
		cancel()
		if err != nil || len(resp.Kvs) != 1 {
			t.Fatalf("state of %s: %v", d.name, err)
		}
		if v := string(resp.Kvs[0].Value); !strings.Contains(v, `"unicast":["`+d.ip+":"+hbPort+`"]`) || !strings.Contains(v, "BEGIN CERTIFICATE") {
			t.Fatalf("state of %s: %s", d.name, v)
		}
	}

	eventually(t, "persistence records in the metrics", func() error {
		resp, err := http.Get("http://" + metricsAddr + "/metrics")
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if want := `openltm_persistence_records{mode="source-address",profile="/Common/src_mirror"} 8`; !strings.Contains(string(body), want) {
			return fmt.Errorf("metrics lack %s", want)
		}
		return nil
	})

	// kill -9 of the active device: bigipB (next in ha-order) takes the
	// virtual address over.
	held, err := net.Dial("tcp", vip)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	a.cmd.Process.Kill()
	failover := eventually(t, "the virtual answers again after the kill", func() error {
		_, err := hello(vip)
		return err
	})
	t.Logf("kill -9 of the active device to the virtual answering again: %v", failover)
	// The connection open through the killed device is gone with it.
	_ = held.SetReadDeadline(time.Now().Add(patience))
	if _, err := io.ReadAll(held); err != nil && os.IsTimeout(err) {
		t.Fatal("a connection opened through the killed device stayed open")
	}
	// The clients, in the other order (a fresh round robin would send
	// each to the other member), stay on their members.
	slices.Reverse(clients)
	for _, src := range clients {
		var got string
		eventually(t, "vs_sticky answers "+src+" after the failover", func() error {
			var err error
			got, err = helloFrom(src)
			return err
		})
		if got != persisted[src] {
			t.Errorf("after the failover client %s went to %s, before to %s", src, got, persisted[src])
		}
	}
	eventually(t, "bigipB active", func() error {
		if f := b.c.Prompt().Failover; f != "Active" {
			return fmt.Errorf("bigipB is %s", f)
		}
		if f := c.c.Prompt().Failover; f != "Standby" {
			return fmt.Errorf("bigipC is %s", f)
		}
		return nil
	})
	out := b.exec(t, "show cm failover-status")
	if !strings.Contains(out, "traffic-group-1") || !strings.Contains(out, "active") {
		t.Fatalf("show cm failover-status on bigipB:\n%s", out)
	}
	// The floating self IP moved with the traffic group.
	eventually(t, "bigipC shows bigipB holding the floating self IP", func() error {
		out, _ := c.try("show net self")
		if !regexp.MustCompile(`float_self +127\.0\.9\.20/24 +traffic-group-1 +yes +bigipB`).MatchString(out) {
			return fmt.Errorf("%s", out)
		}
		return nil
	})
	// The group goes on without bigipA; it shows as behind.
	c.exec(t, "create ltm pool after_failover")
	eventually(t, "bigipB gets the change", func() error {
		_, err := b.try("list ltm pool after_failover")
		return err
	})
	// A clean standby hands the traffic group to bigipC.
	b.exec(t, "run sys failover standby")
	eventually(t, "bigipC active", func() error {
		if f := c.c.Prompt().Failover; f != "Active" {
			return fmt.Errorf("bigipC is %s", f)
		}
		_, err := hello(vip)
		return err
	})

	// auto-sync disabled: a change waits on the other devices as
	// "Changes Pending" until they sync from the group.
	c.exec(t, "modify cm device-group dg1 auto-sync disabled")
	b.exec(t, "run cm config-sync from-group dg1")
	c.exec(t, "create ltm pool manual")
	eventually(t, "bigipB shows Changes Pending", func() error {
		if p := b.c.Prompt(); p.SyncStatus != "Changes Pending" {
			return fmt.Errorf("bigipB prompt says %q", p.SyncStatus)
		}
		return nil
	})
	if _, err := b.try("list ltm pool manual"); err == nil {
		t.Fatal("bigipB applied a change with auto-sync disabled")
	}
	if _, err := b.try("create ltm pool on_b"); err == nil || !strings.Contains(err.Error(), "auto-sync is disabled") {
		t.Fatalf("a commit on a device with changes pending: %v", err)
	}
	b.exec(t, "run cm config-sync from-group dg1")
	b.exec(t, "list ltm pool manual")
	b.exec(t, "create ltm pool on_b")
	c.exec(t, "modify cm device-group dg1 auto-sync enabled")

	// etcd down for every device: commits that need the group are
	// refused, and the active device (bigipC) keeps serving its floating
	// virtual: the devices hear each other's heartbeats (network
	// failover) and nobody claims its traffic group.
	eventually(t, "bigipB hears bigipC's heartbeats", func() error {
		out, _ := b.try("show cm failover-status")
		if !strings.Contains(out, "bigipC") || !strings.Contains(out, "Network failover: heartbeats on 127.0.0.2:"+hbPort) {
			return fmt.Errorf("%s", out)
		}
		return nil
	})
	srv.Stop()
	stopped := time.Now()
	eventually(t, "commits refused while etcd is down", func() error {
		_, err := c.try("create ltm pool during_outage")
		if err == nil || !strings.Contains(err.Error(), "unreachable") {
			return fmt.Errorf("commit with etcd down: %v", err)
		}
		return nil
	})
	if _, err := c.try("list ltm pool during_outage"); err == nil {
		t.Fatal("a refused commit changed the configuration")
	}
	// A client loop, well past the failover time.
	served, loop := 0, time.Now()
	for time.Since(loop) < 3*time.Second {
		if _, err := hello(vip); err != nil {
			t.Fatalf("the floating virtual stopped answering %v after etcd stopped: %v\nbigipC log:\n%s", time.Since(stopped), err, c.stderr)
		}
		served++
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("etcd down: %d connections to the floating virtual over %v, all served", served, time.Since(loop).Round(time.Millisecond))
	if f := b.c.Prompt().Failover; f != "Standby" {
		t.Fatalf("bigipB is %s while bigipC serves with etcd down", f)
	}
	// kill -9 of the active device with etcd down: bigipB no longer
	// hears it and takes the traffic group over by heartbeats.
	c.cmd.Process.Kill()
	viaHeartbeat := eventually(t, "the virtual answers again after the kill with etcd down", func() error {
		_, err := hello(vip)
		return err
	})
	t.Logf("etcd down: kill -9 of the active device to the virtual answering again: %v", viaHeartbeat)
	eventually(t, "bigipB active", func() error {
		if f := b.c.Prompt().Failover; f != "Active" {
			return fmt.Errorf("bigipB is %s", f)
		}
		return nil
	})
	// etcd back: bigipB keeps serving (bigipC's lease, renewed by etcd's
	// restart, expires), commits are accepted, nothing was lost.
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	eventually(t, "commits accepted after etcd returns", func() error {
		_, err := b.try("create ltm pool after_outage")
		return err
	})
	eventually(t, "bigipB owns traffic-group-1 in etcd", func() error {
		out, _ := b.try("show cm failover-status")
		if !regexp.MustCompile(`traffic-group-1 +active +bigipB`).MatchString(out) {
			return fmt.Errorf("%s", out)
		}
		return nil
	})
	t.Logf("etcd restarted to bigipB owning the traffic group in etcd: %v", time.Since(restarted))
	if _, err := hello(vip); err != nil {
		t.Fatalf("the floating virtual after etcd returned: %v", err)
	}
	for _, pool := range []string{"manual", "on_b", "after_failover"} {
		if _, err := b.try("list ltm pool " + pool); err != nil {
			t.Fatalf("bigipB lost pool %s over the etcd outage: %v", pool, err)
		}
	}
	// bigipC comes back: it catches up and stays standby.
	c.cmd.Wait()
	c.c.Close()
	c.start(t)
	eventually(t, "bigipC catches up", func() error {
		_, err := c.try("list ltm pool after_outage")
		return err
	})
	eventually(t, "bigipC standby", func() error {
		if f := c.c.Prompt().Failover; f != "Standby" {
			return fmt.Errorf("bigipC is %s", f)
		}
		return nil
	})

	// bigipA comes back on the same state: it catches up on what the
	// group committed while it was dead, and with auto-failback the
	// traffic group returns to it, the first of ha-order.
	c.exec(t, "modify cm traffic-group traffic-group-1 auto-failback-enabled true auto-failback-time 1")
	a.cmd.Wait()
	a.c.Close()
	a.start(t)
	eventually(t, "bigipA catches up", func() error {
		_, err := a.try("list ltm pool after_outage")
		return err
	})
	eventually(t, "the traffic group fails back to bigipA", func() error {
		got := []string{a.c.Prompt().Failover, b.c.Prompt().Failover, c.c.Prompt().Failover}
		if !slices.Equal(got, []string{"Active", "Standby", "Standby"}) {
			return fmt.Errorf("failover states %v", got)
		}
		_, err := hello(vip)
		return err
	})
	for _, src := range clients {
		if got, err := helloFrom(src); err != nil || got != persisted[src] {
			t.Errorf("after the failback client %s went to %q (%v), before to %q", src, got, err, persisted[src])
		}
	}

	// A device taken out of the group is standalone again; the group
	// goes on without it. (Standalone, it would serve every address; on
	// one machine those the group's active device holds stay unbound.)
	a.exec(t, "modify cm device-group dg1 devices delete { bigipC }")
	eventually(t, "bigipC leaves dg1", func() error {
		if p := c.c.Prompt(); p.SyncStatus != "" && p.SyncStatus != "Standalone" {
			return fmt.Errorf("bigipC prompt says %q", p.SyncStatus)
		}
		return nil
	})
	a.exec(t, "create ltm pool without_c")
	eventually(t, "bigipB gets the change", func() error {
		_, err := b.try("list ltm pool without_c")
		return err
	})
	if _, err := c.try("list ltm pool without_c"); err == nil {
		t.Fatal("bigipC received a change after it left the group")
	}

	// Deleting the group leaves the device standalone. (bigipB and
	// bigipC stop first: standalone on this one machine, each would try to
	// bind the addresses bigipA binds.)
	for _, d := range []*device{b, c} {
		d.c.Close()
		d.cmd.Process.Signal(syscall.SIGTERM)
		d.cmd.Wait()
	}
	a.exec(t, "delete cm device-group dg1")
	if p := a.c.Prompt(); p.SyncStatus != "" && p.SyncStatus != "Standalone" {
		t.Fatalf("bigipA prompt says %q after the group was deleted", p.SyncStatus)
	}
	a.exec(t, "create ltm pool after_delete")
	eventually(t, "bigipA serves the floating virtual alone", func() error {
		_, err := hello(vip)
		return err
	})
}
