//go:build linux

package dataplane

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/openltm/openltm/dataplane/h2gw"
	"github.com/openltm/openltm/dataplane/mblb"
)

// h2Stalled opens an HTTP/2 connection (prior knowledge) with a small
// receive buffer, asks for / with windows wide open and reads nothing
// more, so the gateway's writes to it stop on a zero window; halfClose
// then sends its FIN.
func h2Stalled(t *testing.T, vs string, halfClose bool) *net.TCPConn {
	t.Helper()
	d := net.Dialer{Timeout: 2 * time.Second, Control: smallRecv}
	nc, err := d.Dial("tcp", vs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	c := nc.(*net.TCPConn)
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	for _, f := range [][2]string{{":method", "GET"}, {":scheme", "http"}, {":authority", "x"}, {":path", "/"}} {
		enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	var out bytes.Buffer
	out.WriteString(h2gw.Preface)
	fr := http2.NewFramer(&out, nil)
	fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 30})
	fr.WriteWindowUpdate(0, 1<<30)
	fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: hb.Bytes(), EndStream: true, EndHeaders: true})
	if _, err := c.Write(out.Bytes()); err != nil {
		t.Fatal(err)
	}
	if halfClose {
		// Let the answer start first: the gateway is writing when the FIN comes.
		time.Sleep(300 * time.Millisecond)
		c.CloseWrite()
	}
	return c
}

// TestHTTP2CloseTimers: the tcp profile's close-wait-timeout and
// zero-window-timeout reset an HTTP/2 client (the http2 profile's
// gateway) that stops reading a large answer, or stops and half-closes;
// without the timers it is kept; a Go HTTP/2 client that reads gets its
// answers with the timers set.
func TestHTTP2CloseTimers(t *testing.T) {
	bigAnswer := func(c *net.TCPConn) {
		br := bufio.NewReader(c)
		for {
			if _, err := http.ReadRequest(br); err != nil {
				return
			}
			c.SetWriteDeadline(time.Now().Add(10 * time.Second))
			c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 8388608\r\n\r\n"))
			if _, err := c.Write(make([]byte, 8<<20)); err != nil {
				return
			}
		}
	}
	cases := []struct {
		name      string
		close     *TCPClose
		halfClose bool
		reads     bool // a Go HTTP/2 client that reads its answers
		want      string
	}{
		{name: "close-wait", close: &TCPClose{AfterFIN: time.Second}, halfClose: true, want: "RST"},
		{name: "no close-wait", halfClose: true, want: "open"},
		{name: "zero-window", close: &TCPClose{ZeroWindow: time.Second}, want: "RST"},
		{name: "no zero-window", want: "open"},
		{name: "zero-window reading", close: &TCPClose{AfterFIN: time.Second, ZeroWindow: 500 * time.Millisecond}, reads: true},
	}
	for i, tc := range cases {
		vs := "127.51.1." + strconv.Itoa(i+1) + ":8000"
		member := "127.51.2." + strconv.Itoa(i+1) + ":9000"
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l, err := net.Listen("tcp", member)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Close() })
			go func() {
				for {
					c, err := l.Accept()
					if err != nil {
						return
					}
					go func() {
						defer c.Close()
						bigAnswer(c.(*net.TCPConn))
					}()
				}
			}()
			p, _ := newPlane(t)
			cfg := mblbConfig(vs, &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, member)
			v := cfg.Virtuals["/Common/vs"]
			v.TCPClose = tc.close
			v.HTTP2 = &HTTP2{Always: true}
			mustApply(t, p, cfg)
			if tc.reads {
				client := h2Client(t)
				for range 2 {
					resp, err := client.Get("http://" + vs + "/")
					if err != nil {
						t.Fatal(err)
					}
					// Read slowly at first: the window closes and opens again.
					time.Sleep(200 * time.Millisecond)
					n, err := io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if err != nil || resp.ProtoMajor != 2 || n != 8<<20 {
						t.Fatalf("HTTP/%d: %d bytes, %v", resp.ProtoMajor, n, err)
					}
				}
				return
			}
			c := h2Stalled(t, vs, tc.halfClose)
			bound := 8 * time.Second
			if tc.want == "open" {
				bound = 3 * time.Second // what must not end: a few of the timers' periods
			}
			if got := socketEnd(c, bound); got != tc.want {
				t.Errorf("client: %s, want %s", got, tc.want)
			}
		})
	}
}
