//go:build linux

package dataplane

import (
	"bufio"
	"io"
	"net"
	"regexp"
	"testing"
	"time"
)

// The socket commands (TCP::mss, TCP::rtt, TCP::nagle, IP::tos ...) reach
// the flow's own sockets: on an L4 virtual both sides, on an HTTP virtual
// the client's (its server side is many connections, a rule's error).
func TestRulesSocketCommands(t *testing.T) {
	t.Parallel()
	t.Run("l4", func(t *testing.T) {
		serveConns(t, "127.0.138.11:80", func(c net.Conn) { io.Copy(c, c) })
		p, lg := newPlane(t)
		cfg := basic("127.0.138.1:8000", "127.0.138.11:80")
		var rl *ruleLog
		cfg.Virtuals["/Common/vs"].Rules, rl = compileRules(t, `
when CLIENT_ACCEPTED { IP::tos 184; TCP::nagle enable }
when SERVER_CONNECTED {
    IP::tos 40
    TCP::nagle disable
    set line "server mss [TCP::mss] rtt [TCP::rtt] rttvar [TCP::rttvar] cwnd [TCP::snd_cwnd] rto [TCP::rto]"
    clientside { TCP::respond "$line client mss [TCP::mss]\n" }
}`)
		mustApply(t, p, cfg)
		c, err := net.Dial("tcp", "127.0.138.1:8000")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		line, err := bufio.NewReader(c).ReadString('\n')
		re := regexp.MustCompile(`^server mss [1-9][0-9]* rtt [0-9]+ rttvar [0-9]+ cwnd [1-9][0-9]* rto [1-9][0-9]* client mss [1-9][0-9]*\n$`)
		if err != nil || !re.MatchString(line) {
			t.Fatalf("got %q, %v (log: %s %v)", line, err, lg, rl.Lines())
		}
	})
	t.Run("http", func(t *testing.T) {
		p, lg := newPlane(t)
		cfg := httpRulesConfig(t, "127.0.138.2:80", false, `
when HTTP_REQUEST {
    IP::tos 184
    catch { TCP::mss serverside } e
    HTTP::respond 200 content "mss [TCP::mss] rtt [TCP::rtt] server: $e"
}`)
		mustApply(t, p, cfg)
		c := dialHTTPVS(t, "127.0.138.2:80")
		r, body, err := c.do(httpReq("www.example.com", "/"))
		if err != nil {
			t.Fatalf("%v (log: %s)", err, lg)
		}
		re := regexp.MustCompile(`^mss [1-9][0-9]* rtt [0-9]+ server: TCP::mss: the server side of a message-based or HTTP virtual has no one connection$`)
		if r.StatusCode != 200 || !re.MatchString(body) {
			t.Fatalf("%d %q", r.StatusCode, body)
		}
	})
}
