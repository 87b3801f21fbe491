package ipfixtest

import (
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Nfcapd starts nfcapd on ip:port, runs send with its address, stops
// it (which writes its file) and returns what nfdump reads from the file.
// The test is skipped when nfcapd or nfdump is missing.
func Nfcapd(t *testing.T, ip string, port int, send func(netip.AddrPort)) string {
	t.Helper()
	for _, tool := range []string{"nfcapd", "nfdump"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (Debian package nfdump): the collector test needs it", tool)
		}
	}
	dir := t.TempDir()
	cmd := exec.Command("nfcapd", "-b", ip, "-p", fmt.Sprint(port), "-w", dir, "-t", "3600")
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}
	defer stop()
	// nfcapd listens once its current file exists.
	WaitFor(t, "nfcapd to start", func() bool {
		m, _ := filepath.Glob(filepath.Join(dir, "nfcapd.current*"))
		return len(m) > 0
	})
	send(netip.AddrPortFrom(netip.MustParseAddr(ip), uint16(port)))
	time.Sleep(500 * time.Millisecond) // nfcapd reads its socket before it stops
	stop()
	files, _ := filepath.Glob(filepath.Join(dir, "nfcapd.2*"))
	if len(files) == 0 {
		ents, _ := os.ReadDir(dir)
		t.Fatalf("nfcapd wrote no file (%v); its log:\n%s", ents, logs.String())
	}
	var all strings.Builder
	for _, f := range files {
		out, err := exec.Command("nfdump", "-r", f, "-o", "line", "-q").CombinedOutput()
		if err != nil {
			t.Fatalf("nfdump -r %s: %v\n%s", f, err, out)
		}
		all.Write(out)
	}
	return all.String()
}
