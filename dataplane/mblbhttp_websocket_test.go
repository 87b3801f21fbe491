package dataplane

import (
	"bufio"
	"crypto/sha1"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/wsframe"
)

// wsMember is a WebSocket member: it answers the handshake (echoing the
// asked subprotocol) and then every frame with "echo " and its payload,
// unmasked as a server's frames are; a close frame is answered with
// one. What it received is reported on got, as the payloads it unmasked,
// "masked" or "unmasked" first.
func wsMember(t *testing.T, addr string, got chan<- string) {
	serveConns(t, addr, func(c net.Conn) {
		br := bufio.NewReader(c)
		r, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		sum := sha1.Sum([]byte(r.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
		resp := "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
			base64.StdEncoding.EncodeToString(sum[:]) + "\r\n"
		if p := r.Header.Get("Sec-WebSocket-Protocol"); p != "" {
			resp += "Sec-WebSocket-Protocol: " + p + "\r\n"
		}
		got <- "extensions=" + r.Header.Get("Sec-WebSocket-Extensions")
		io.WriteString(c, resp+"\r\n")
		for {
			h, p, err := readWSFrame(br)
			if err != nil {
				return
			}
			m := "unmasked "
			if h.Masked {
				m = "masked "
			}
			got <- m + string(p)
			if h.Opcode == wsframe.OpClose {
				c.Write(wsFrame(wsframe.OpClose, p, false))
				return
			}
			c.Write(wsFrame(wsframe.OpText, []byte("echo "+string(p)), false))
		}
	})
}

// readWSFrame reads one frame, its payload unmasked.
func readWSFrame(br *bufio.Reader) (wsframe.Header, []byte, error) {
	for need := 2; ; need++ {
		b, err := br.Peek(need)
		if err != nil {
			return wsframe.Header{}, nil, err
		}
		h, n, err := wsframe.Parse(b)
		if err != nil {
			return h, nil, err
		}
		if n == 0 {
			continue
		}
		br.Discard(n)
		p := make([]byte, h.Length)
		if _, err := io.ReadFull(br, p); err != nil {
			return h, nil, err
		}
		if h.Masked {
			wsframe.Mask(h.Key, 0, p)
		}
		return h, p, nil
	}
}

// wsFrame is one whole frame, masked with a fixed key when masked.
func wsFrame(op uint8, p []byte, masked bool) []byte {
	h := wsframe.Header{Fin: true, Opcode: op, Length: uint64(len(p)), Masked: masked, Key: [4]byte{1, 2, 3, 4}}
	b := h.Append(nil)
	q := append([]byte(nil), p...)
	if masked {
		wsframe.Mask(h.Key, 0, q)
	}
	return append(b, q...)
}

// wsDial opens the virtual's WebSocket with subprotocol proto.
func wsDial(t *testing.T, vs, proto string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", vs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "GET /chat HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"+
		"Sec-WebSocket-Extensions: permessage-deflate\r\nSec-WebSocket-Protocol: "+proto+"\r\n\r\n")
	br := bufio.NewReader(c)
	r, err := http.ReadResponse(br, nil)
	if err != nil || r.StatusCode != 101 {
		t.Fatalf("handshake: %v %v", r, err)
	}
	return c, br
}

func expectWS(t *testing.T, got <-chan string, want string) {
	t.Helper()
	select {
	case g := <-got:
		if g != want {
			t.Fatalf("the member got %q, want %q", g, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the member got nothing, want %q", want)
	}
}

// TestWebSocketProfile: with the websocket profile an upgraded
// connection is framed: the rules see and edit frames both ways, drop
// them, disconnect both ends with close frames, switch the framing off
// (WS::enabled false), and remasking and compression disabled act on
// what the member gets.
func TestWebSocketProfile(t *testing.T) {
	got := make(chan string, 16)
	wsMember(t, "127.0.236.41:80", got)
	rule := `
when WS_REQUEST {
    log local0. "request protocol=[WS::request protocol] version=[WS::request version]"
    if { [WS::request protocol] eq "plain" } { WS::enabled false }
    if { [WS::request protocol] eq "remask" } { WS::masking remask }
}
when WS_RESPONSE {
    log local0. "response valid=[WS::response valid] protocol=[WS::response protocol]"
}
when WS_CLIENT_FRAME {
    if { [WS::frame type] == 1 } { WS::collect frame }
}
when WS_CLIENT_DATA {
    set p [WS::payload]
    if { $p eq "secret" } { WS::payload replace 0 6 "******" }
    if { $p starts_with "drop" } { WS::frame drop }
    set quit [expr { $p eq "quit" }]
}
when WS_CLIENT_FRAME_DONE {
    if { [info exists quit] && $quit } { WS::disconnect 1000 "bye" }
}
when WS_SERVER_FRAME {
    if { [WS::frame type] == 1 } { WS::frame prepend "srv: " }
}`
	p, lg := newPlane(t)
	opts := mblb.HTTPOptions{WebSocket: &wsframe.Options{Profile: "/Common/websocket", NoCompression: true}}
	cfg := l7Config(t, "127.0.236.31:80", false, opts, "", "127.0.236.41:80")
	var rlog *ruleLog
	cfg.Virtuals["/Common/vs"].Rules, rlog = compileRules(t, rule)
	mustApply(t, p, cfg)

	c, br := wsDial(t, "127.0.236.31:80", "chat")
	expectWS(t, got, "extensions=") // compression disabled: the offer is gone
	for _, tc := range []struct{ send, member, back string }{
		{"hello", "masked hello", "srv: echo hello"},
		{"secret", "masked ******", "srv: echo ******"},
	} {
		c.Write(wsFrame(wsframe.OpText, []byte(tc.send), true))
		expectWS(t, got, tc.member)
		h, b, err := readWSFrame(br)
		if err != nil || string(b) != tc.back || h.Masked {
			t.Fatalf("sent %q, got back %q (%+v) %v (log %s)", tc.send, b, h, err, lg)
		}
	}
	// A dropped frame never reaches the member; the next one does.
	c.Write(wsFrame(wsframe.OpText, []byte("drop me"), true))
	c.Write(wsFrame(wsframe.OpBinary, []byte("bin"), true))
	expectWS(t, got, "masked bin")
	if _, b, err := readWSFrame(br); err != nil || string(b) != "srv: echo bin" {
		t.Fatalf("binary frame back: %q %v", b, err)
	}
	// WS::disconnect: close frames both ways, then the connection ends.
	c.Write(wsFrame(wsframe.OpText, []byte("quit"), true))
	expectWS(t, got, "masked quit")
	expectWS(t, got, "masked \x03\xe8bye")
	var frames []string
	for {
		h, b, err := readWSFrame(br)
		if err != nil {
			break
		}
		frames = append(frames, string(rune('0'+h.Opcode))+":"+string(b))
	}
	if len(frames) < 1 || frames[len(frames)-1] != "8:\x03\xe8bye" {
		t.Fatalf("the client's last frames %q, want a close frame with 1000 bye (log %s)", frames, lg)
	}
	lines := strings.Join(rlog.Lines(), "\n")
	for _, want := range []string{"request protocol=chat version=13", "response valid=1 protocol=chat"} {
		if !strings.Contains(lines, want) {
			t.Errorf("rule log lacks %q:\n%s", want, lines)
		}
	}

	// WS::masking remask: the member gets the payload under another key.
	c2, br2 := wsDial(t, "127.0.236.31:80", "remask")
	expectWS(t, got, "extensions=")
	c2.Write(wsFrame(wsframe.OpBinary, []byte("abc"), true))
	expectWS(t, got, "masked abc")
	if _, b, err := readWSFrame(br2); err != nil || string(b) != "srv: echo abc" {
		t.Fatalf("remasked echo: %q %v", b, err)
	}

	// WS::enabled false: a plain tunnel, the rules see no frame.
	c3, br3 := wsDial(t, "127.0.236.31:80", "plain")
	expectWS(t, got, "extensions=")
	c3.Write(wsFrame(wsframe.OpText, []byte("secret"), true))
	expectWS(t, got, "masked secret")
	if _, b, err := readWSFrame(br3); err != nil || string(b) != "echo secret" {
		t.Fatalf("plain tunnel echo: %q %v", b, err)
	}
}
