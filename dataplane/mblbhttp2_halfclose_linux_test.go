//go:build linux

package dataplane

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/openltm/openltm/dataplane/h2gw"
	"github.com/openltm/openltm/dataplane/mblb"
)

// TestHTTP2HalfClose: an HTTP/2 client of the http2 profile's gateway
// that half-closes (TCP FIN) right after its requests, while their
// answers are still with a slow member, gets every answer before the
// connection ends (an HTTP/1 client that half-closes gets its answers
// too); one that never reads them is reset by the tcp profile's
// close-wait-timeout, rather than left to the kernel by a normal close;
// a stream whose request had not ended when the FIN came is reset.
func TestHTTP2HalfClose(t *testing.T) {
	cases := []struct {
		name    string
		size    int    // the answer's body
		streams int    // requests sent before the FIN
		open    bool   // one more stream whose request does not end
		read    bool   // the client reads what comes
		noTimer bool   // no close-wait-timeout
		want    string // the answers read, or how the socket ended
	}{
		{name: "answers after FIN", size: 1000, streams: 3, read: true, want: "1:200/1000 3:200/1000 5:200/1000 end"},
		{name: "unfinished request reset", size: 10, streams: 1, open: true, read: true, want: "1:200/10 3:rst end"},
		{name: "never read: reset", size: 4 << 20, streams: 1, want: "RST"},
		{name: "never read, no close-wait: kept", size: 4 << 20, streams: 1, noTimer: true, want: "open"},
	}
	for i, tc := range cases {
		vs := "127.89.1." + strconv.Itoa(i+1) + ":8000"
		member := "127.89.2." + strconv.Itoa(i+1) + ":9000"
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
						br := bufio.NewReader(c)
						for {
							if _, err := http.ReadRequest(br); err != nil {
								return
							}
							// Slow: the client's FIN comes first.
							time.Sleep(300 * time.Millisecond)
							c.SetWriteDeadline(time.Now().Add(10 * time.Second))
							c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: " + strconv.Itoa(tc.size) + "\r\n\r\n"))
							if _, err := c.Write(make([]byte, tc.size)); err != nil {
								return
							}
						}
					}()
				}
			}()
			p, _ := newPlane(t)
			cfg := mblbConfig(vs, &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, member)
			v := cfg.Virtuals["/Common/vs"]
			if !tc.noTimer {
				v.TCPClose = &TCPClose{AfterFIN: time.Second}
			}
			v.HTTP2 = &HTTP2{Always: true}
			mustApply(t, p, cfg)

			d := net.Dialer{Timeout: 2 * time.Second}
			if !tc.read {
				d.Control = smallRecv
			}
			nc, err := d.Dial("tcp", vs)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			c := nc.(*net.TCPConn)
			var out bytes.Buffer
			out.WriteString(h2gw.Preface)
			fr := http2.NewFramer(&out, nil)
			fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 30})
			fr.WriteWindowUpdate(0, 1<<30)
			var hb bytes.Buffer
			enc := hpack.NewEncoder(&hb)
			n := tc.streams
			if tc.open {
				n++
			}
			for k := range n {
				hb.Reset()
				for _, f := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":authority", "x"}, {":path", "/" + strconv.Itoa(k)}} {
					enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
				}
				end := k < tc.streams
				fr.WriteHeaders(http2.HeadersFrameParam{StreamID: uint32(2*k + 1), BlockFragment: hb.Bytes(), EndStream: end, EndHeaders: true})
			}
			if _, err := c.Write(out.Bytes()); err != nil {
				t.Fatal(err)
			}
			c.CloseWrite()
			if !tc.read {
				bound := 10 * time.Second
				if tc.want == "open" {
					bound = 3 * time.Second // what must not end: a few of the timers' periods
				}
				if got := socketEnd(c, bound); got != tc.want {
					t.Errorf("client: %s, want %s", got, tc.want)
				}
				return
			}
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			if got := readAnswers(c); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// readAnswers reads an HTTP/2 connection to its end and tells each
// stream's answer (status/body length, or rst), in the order of their
// streams, then "end" for a clean end of the connection.
func readAnswers(c net.Conn) string {
	fr := http2.NewFramer(io.Discard, c)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	status := map[uint32]string{}
	size := map[uint32]int{}
	var got []string
	for range 10000 {
		f, err := fr.ReadFrame()
		if err != nil {
			if err == io.EOF {
				got = append(got, "end")
			} else {
				got = append(got, err.Error())
			}
			break
		}
		id := f.Header().StreamID
		switch f := f.(type) {
		case *http2.MetaHeadersFrame:
			status[id] = f.PseudoValue("status")
			if f.StreamEnded() {
				got = append(got, strconv.Itoa(int(id))+":"+status[id]+"/0")
			}
		case *http2.DataFrame:
			size[id] += len(f.Data())
			if f.StreamEnded() {
				got = append(got, strconv.Itoa(int(id))+":"+status[id]+"/"+strconv.Itoa(size[id]))
			}
		case *http2.RSTStreamFrame:
			got = append(got, strconv.Itoa(int(id))+":rst")
		}
	}
	if n := len(got) - 1; n > 0 {
		slices.Sort(got[:n]) // streams answered on several lanes end in any order
	}
	return strings.Join(got, " ")
}
