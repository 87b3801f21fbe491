package transcripts

import (
	"bytes"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// h2stall ADDR PATH SECONDS [halfclose]: speak HTTP/2 with prior
// knowledge with a small receive buffer, ask for PATH with the windows
// wide open and read nothing (so the proxy's writes stop on a zero
// window); with halfclose, send the FIN half a second later. Then watch
// the socket, without reading, for at most SECONDS: prints "end: RST"
// once a reset closed it, "end: open" otherwise.
func cmdH2Stall(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 || len(args) > 4 || (len(args) == 4 && args[3] != "halfclose") {
		ts.Fatalf("usage: h2stall ADDR PATH SECONDS [halfclose]")
	}
	secs, err := strconv.ParseFloat(args[2], 64)
	ts.Check(err)
	if secs > 30 {
		ts.Fatalf("h2stall: at most 30 seconds")
	}
	nc, err := net.DialTimeout("tcp", args[0], 3*time.Second)
	ts.Check(err)
	defer nc.Close()
	c := nc.(*net.TCPConn)
	ts.Check(c.SetReadBuffer(4096))
	var hb, out bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	for _, f := range [][2]string{{":method", "GET"}, {":scheme", "http"}, {":authority", args[0]}, {":path", args[1]}} {
		enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	out.WriteString(http2.ClientPreface)
	fr := http2.NewFramer(&out, nil)
	fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 30})
	fr.WriteWindowUpdate(0, 1<<30)
	fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: hb.Bytes(), EndStream: true, EndHeaders: true})
	_, err = c.Write(out.Bytes())
	ts.Check(err)
	if len(args) == 4 {
		time.Sleep(500 * time.Millisecond) // the answer is on its way first
		ts.Check(c.CloseWrite())
	}
	rc, err := c.SyscallConn()
	ts.Check(err)
	end := "open"
	for until := time.Now().Add(time.Duration(secs * float64(time.Second))); time.Now().Before(until); time.Sleep(50 * time.Millisecond) {
		if socketClosed(rc) { // tcpclose_linux_test.go
			end = "RST"
			break
		}
	}
	fmt.Fprintf(ts.Stdout(), "end: %s\n", end)
}
