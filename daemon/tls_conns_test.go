package daemon

import (
	"bufio"
	"crypto/tls"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// TestSSLProfileConnectionsShown opens N TLS clients through a virtual
// with client-ssl and server-ssl and reads the profiles' Current,
// Maximum and Total Connections in show ltm profile client-ssl and
// server-ssl: N, N, N while they are open; 0, N, N once they closed; 0,
// 0, 0 after reset-stats.
func TestSSLProfileConnectionsShown(t *testing.T) {
	const n = 3
	tlsMember(t, "127.46.0.13:8443")
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"create ltm profile client-ssl conncssl defaults-from clientssl",
		"create ltm profile server-ssl connssl defaults-from serverssl",
		"create ltm pool tp members add { 127.46.0.13:8443 }",
		"create ltm virtual vs destination 127.46.0.3:443 pool tp profiles replace-all-with { tcp conncssl connssl }",
	)
	var conns []net.Conn
	for i := 0; i < n; i++ {
		c, err := tls.DialWithDialer(&net.Dialer{Timeout: 3 * time.Second}, "tcp", "127.46.0.3:443", &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c, "hello\n")
		if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || strings.TrimSpace(line) != "TLS member" {
			t.Fatalf("through vs: %q %v", line, err)
		}
		conns = append(conns, c)
	}
	for _, show := range []string{"show ltm profile client-ssl conncssl", "show ltm profile server-ssl connssl"} {
		waitStats(t, s, show, map[string]string{"Current Connections": "3", "Maximum Connections": "3", "Total Connections": "3"})
	}
	for _, c := range conns {
		c.Close()
	}
	for _, show := range []string{"show ltm profile client-ssl conncssl", "show ltm profile server-ssl connssl"} {
		waitStats(t, s, show, map[string]string{"Current Connections": "0", "Maximum Connections": "3", "Total Connections": "3"})
	}
	mustRun(t, s, "reset-stats ltm profile client-ssl conncssl", "reset-stats ltm profile server-ssl connssl")
	for _, show := range []string{"show ltm profile client-ssl conncssl", "show ltm profile server-ssl connssl"} {
		waitStats(t, s, show, map[string]string{"Current Connections": "0", "Maximum Connections": "0", "Total Connections": "0"})
	}
}
