package dataplane

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/wsframe"
)

// TestWebSocketWindowBits: the websocket profile's window-bits bounds
// the permessage-deflate windows of the client's offer on its way to the
// member (server_max_window_bits added or lowered, client_max_window_bits
// lowered when the client offered it); an offer already within the bound,
// and a profile without window-bits, leave the field as it came;
// compression disabled still removes it.
func TestWebSocketWindowBits(t *testing.T) {
	got := make(chan string, 16)
	wsMember(t, "127.15.2.11:80", got)
	for i, c := range []struct {
		name   string
		opts   wsframe.Options
		offer  string // the client's Sec-WebSocket-Extensions ("": none)
		member string // what the member got
	}{
		{"bounded both ways", wsframe.Options{WindowBits: 10}, "permessage-deflate; client_max_window_bits", "permessage-deflate; client_max_window_bits=10; server_max_window_bits=10"},
		{"server bound added", wsframe.Options{WindowBits: 12}, "permessage-deflate", "permessage-deflate; server_max_window_bits=12"},
		{"within the bound", wsframe.Options{WindowBits: 12}, "permessage-deflate; server_max_window_bits=9", "permessage-deflate; server_max_window_bits=9"},
		{"lowered", wsframe.Options{WindowBits: 9}, "permessage-deflate; server_max_window_bits=15; client_max_window_bits=11", "permessage-deflate; server_max_window_bits=9; client_max_window_bits=9"},
		{"other extension", wsframe.Options{WindowBits: 10}, "x-custom; a=1", "x-custom; a=1"},
		{"no offer", wsframe.Options{WindowBits: 10}, "", ""},
		{"no window-bits", wsframe.Options{}, "permessage-deflate; client_max_window_bits", "permessage-deflate; client_max_window_bits"},
		{"compression disabled", wsframe.Options{WindowBits: 10, NoCompression: true}, "permessage-deflate", ""},
	} {
		p, _ := newPlane(t)
		c.opts.Profile = "/Common/ws"
		vs := fmt.Sprintf("127.15.2.%d:80", 1+i%2) // (a plane per row; two addresses alternate while one closes)
		mustApply(t, p, l7Config(t, vs, false, mblb.HTTPOptions{WebSocket: &c.opts}, "", "127.15.2.11:80"))
		conn, err := net.Dial("tcp", vs)
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		ext := ""
		if c.offer != "" {
			ext = "Sec-WebSocket-Extensions: " + c.offer + "\r\n"
		}
		io.WriteString(conn, "GET /chat HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
			"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"+ext+"\r\n")
		br := bufio.NewReader(conn)
		if r, err := http.ReadResponse(br, nil); err != nil || r.StatusCode != 101 {
			t.Fatalf("%s: handshake: %v %v", c.name, r, err)
		}
		expectWS(t, got, "extensions="+c.member)
		// The tunnel carries frames after the handshake.
		conn.Write(wsFrame(wsframe.OpText, []byte("hi"), true))
		if _, pl, err := readWSFrame(br); err != nil || string(pl) != "echo hi" {
			t.Errorf("%s: echo %q %v", c.name, pl, err)
		}
		expectWS(t, got, "masked hi")
		conn.Close()
		p.Close()
	}
}

// TestWebSocketWindowBitsPython: a real client and server (Python's
// websockets) negotiate permessage-deflate through a virtual whose
// profile says window-bits 10: both windows are bounded to 10 bits in
// what the client accepted, and compressed messages of 64 KiB, past the
// window, cross both ways intact.
func TestWebSocketWindowBitsPython(t *testing.T) {
	if exec.Command("/usr/bin/python3", "-c", "import websockets").Run() != nil {
		t.Skip("Debian's python3 with websockets (python3-websockets) is needed")
	}
	dir := t.TempDir()
	server := filepath.Join(dir, "server.py")
	client := filepath.Join(dir, "client.py")
	os.WriteFile(server, []byte(`import asyncio, sys, websockets
async def echo(ws, path=None):
    async for m in ws:
        if m == "ext?":
            await ws.send("server saw: " + ws.request_headers.get("Sec-WebSocket-Extensions", ""))
        else:
            await ws.send(m[::-1])
async def main():
    async with websockets.serve(echo, "127.15.2.21", int(sys.argv[1])):
        print("ready", flush=True)
        await asyncio.Future()
asyncio.run(main())
`), 0o644)
	os.WriteFile(client, []byte(`import asyncio, sys, websockets
async def main(url):
    async with websockets.connect(url) as ws:
        print("client accepted:", ws.response_headers.get("Sec-WebSocket-Extensions", ""))
        await ws.send("ext?")
        print(await ws.recv())
        m = "".join("line %d of a compressible message\n" % i for i in range(2000))
        await ws.send(m)
        r = await ws.recv()
        print("round trip", len(m), r == m[::-1])
asyncio.run(asyncio.wait_for(main(sys.argv[1]), 20))
`), 0o644)
	ln, err := net.Listen("tcp", "127.15.2.21:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	srv := exec.Command("/usr/bin/python3", server, strconv.Itoa(port))
	out, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	ready := make(chan string, 1)
	go func() { l, _ := bufio.NewReader(out).ReadString('\n'); ready <- l }()
	select {
	case l := <-ready:
		if !strings.HasPrefix(l, "ready") {
			t.Fatalf("server: %q", l)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the Python server did not start")
	}
	p, _ := newPlane(t)
	member := netip.AddrPortFrom(netip.MustParseAddr("127.15.2.21"), uint16(port)).String()
	mustApply(t, p, l7Config(t, "127.15.2.20:80", false, mblb.HTTPOptions{WebSocket: &wsframe.Options{Profile: "/Common/ws", WindowBits: 10}}, "", member))
	b, err := exec.Command("/usr/bin/python3", client, "ws://127.15.2.20/").CombinedOutput()
	if err != nil {
		t.Fatalf("client: %v\n%s", err, b)
	}
	for _, want := range []string{
		"client accepted: permessage-deflate; server_max_window_bits=10; client_max_window_bits=10\n",
		"server saw: permessage-deflate; client_max_window_bits=10; server_max_window_bits=10\n",
		"round trip 70890 True\n",
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("client printed:\n%s\nwant %q", b, want)
		}
	}
}

// TestWebSocketNoDelay: no-delay disabled turns Nagle's algorithm on
// for both sockets of an upgraded connection (TCP_NODELAY read back from
// the proxy's own sockets, found by their addresses); enabled, the
// default, leaves TCP_NODELAY on, as on every proxy socket.
func TestWebSocketNoDelay(t *testing.T) {
	for i, nagle := range []bool{false, true} {
		// A member and a virtual of its own per row, so that the sockets
		// found are this row's.
		got := make(chan string, 16)
		member := fmt.Sprintf("127.15.2.%d:80", 41+i)
		wsMember(t, member, got)
		p, _ := newPlane(t)
		vs := fmt.Sprintf("127.15.2.%d:80", 32+i)
		mustApply(t, p, l7Config(t, vs, false, mblb.HTTPOptions{WebSocket: &wsframe.Options{Profile: "/Common/ws", Nagle: nagle}}, "", member))
		c, br := wsDial(t, vs, "chat")
		expectWS(t, got, "extensions=permessage-deflate")
		c.Write(wsFrame(wsframe.OpText, []byte("x"), true))
		if _, pl, err := readWSFrame(br); err != nil || string(pl) != "echo x" {
			t.Fatalf("nagle %v: echo %q %v", nagle, pl, err)
		}
		expectWS(t, got, "masked x")
		client := netip.MustParseAddrPort(c.LocalAddr().String())
		front, back := -1, -1
		for range 100 { // (the member side's socket is the one whose peer is the member)
			front, back = socketNoDelay(t, netip.MustParseAddrPort(vs), client), socketNoDelay(t, netip.AddrPort{}, netip.MustParseAddrPort(member))
			if front >= 0 && back >= 0 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		want := 1
		if nagle {
			want = 0
		}
		if front != want || back != want {
			t.Errorf("no-delay %v: TCP_NODELAY client side %d, member side %d, want %d", !nagle, front, back, want)
		}
		c.Close()
		p.Close()
	}
}

// socketNoDelay is TCP_NODELAY of this process's TCP socket whose peer is
// peer (and whose own address is local, when valid); -1 when there is
// none.
func socketNoDelay(t *testing.T, local, peer netip.AddrPort) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		pa, err := unix.Getpeername(fd)
		if err != nil {
			continue
		}
		p4, ok := pa.(*unix.SockaddrInet4)
		if !ok || netip.AddrPortFrom(netip.AddrFrom4(p4.Addr), uint16(p4.Port)) != peer {
			continue
		}
		if local.IsValid() {
			la, err := unix.Getsockname(fd)
			l4, ok := la.(*unix.SockaddrInet4)
			if err != nil || !ok || netip.AddrPortFrom(netip.AddrFrom4(l4.Addr), uint16(l4.Port)) != local {
				continue
			}
		}
		v, err := unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY)
		if err != nil {
			continue
		}
		if v != 0 {
			v = 1
		}
		return v
	}
	return -1
}
