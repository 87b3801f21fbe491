//go:build linux

package daemon

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane"
)

// TestResetCauseDB: sys db tm.rstcause.log takes enable and disable
// only, and while enabled each reset of the dataplane has its 01230140
// line in the ltm log; tm.rstcause.pkt is kept with a warning.
func TestResetCauseDB(t *testing.T) {
	dir := t.TempDir()
	e, err := Open(Options{StateDir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	p := dataplane.New(dataplane.Options{Logger: e.Logger()})
	defer p.Close()
	if err := e.AttachDataplane(p); err != nil {
		t.Fatal(err)
	}
	s := e.NewSession("admin").(*Session)

	steps := []struct {
		cmd, out, err string // substrings; err "" expects none
	}{
		{cmd: "create ltm pool p"},
		{cmd: "create ltm virtual vs destination 127.27.2.1:80 ip-protocol tcp pool p"},
		{cmd: "modify sys db tm.rstcause.log value yes", err: "01070734:3: Configuration error: DB validation exception, invalid value (yes) for db variable (tm.rstcause.log)"},
		{cmd: "modify sys db tm.rstcause.log value Enable", err: "invalid value (Enable)"},
		{cmd: "modify sys db tm.rstcause.pkt value 1", err: "invalid value (1) for db variable (tm.rstcause.pkt)"},
		{cmd: "list sys db tm.rstcause.log", out: "value \"disable\""}, // the refused values changed nothing
		{cmd: "modify sys db tm.rstcause.pkt value enable", out: "carries no payload"},
		{cmd: "modify sys db tm.rstcause.log value disable"},
	}
	for _, st := range steps {
		out, errText := run(t, s, st.cmd)
		if st.err == "" && errText != "" || !strings.Contains(errText, st.err) {
			t.Fatalf("%s: error %q, want %q", st.cmd, errText, st.err)
		}
		if !strings.Contains(out, st.out) {
			t.Fatalf("%s: output %q, want %q", st.cmd, out, st.out)
		}
	}

	// Off: a reset, no line. On: the next reset's line. The log is
	// written in order, so the first reset's line would come first.
	off := resetClient(t, "127.27.2.1:80")
	if _, errText := run(t, s, "modify sys db tm.rstcause.log value enable"); errText != "" {
		t.Fatal(errText)
	}
	on := resetClient(t, "127.27.2.1:80")
	re := regexp.MustCompile(` info tmm\[\d+\]: 01230140:6: RST sent from 127\.27\.2\.1:80 to ` + regexp.QuoteMeta(on) + `, \[l4:lb\] No server selected\n`)
	var log string
	for i := 0; i < 250 && !re.MatchString(log); i++ {
		time.Sleep(20 * time.Millisecond)
		b, _ := os.ReadFile(filepath.Join(dir, LogFile))
		log = string(b)
	}
	if !re.MatchString(log) {
		t.Fatalf("no reset line for %s in the ltm log:\n%s", on, log)
	}
	if strings.Contains(log, " to "+off+",") {
		t.Fatalf("a reset logged while tm.rstcause.log was disabled:\n%s", log)
	}
}

// resetClient connects from 127.27.0.1 to vs, reads until the virtual
// ends the connection and returns the client's address. The socket is
// bound before its connect, so that its address is known when the reset
// comes before the connect's answer is read (the dial fails with it).
func resetClient(t *testing.T, vs string) string {
	t.Helper()
	var local string
	d := net.Dialer{Timeout: 2 * time.Second, Control: func(_, _ string, rc syscall.RawConn) error {
		var err error
		rc.Control(func(fd uintptr) {
			if err = syscall.Bind(int(fd), &syscall.SockaddrInet4{Addr: [4]byte{127, 27, 0, 1}}); err != nil {
				return
			}
			var sa syscall.Sockaddr
			if sa, err = syscall.Getsockname(int(fd)); err == nil {
				local = net.JoinHostPort("127.27.0.1", strconv.Itoa(sa.(*syscall.SockaddrInet4).Port))
			}
		})
		return err
	}}
	c, err := d.Dial("tcp", vs)
	if err != nil {
		if local == "" || !errors.Is(err, syscall.ECONNRESET) {
			t.Fatal(err)
		}
		return local // reset before the connect returned
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	io.Copy(io.Discard, bufio.NewReader(c))
	return local
}
