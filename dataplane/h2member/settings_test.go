package h2member

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
)

// seenSettings is what a member was told when a connection began: the
// client's SETTINGS and the connection window's first WINDOW_UPDATE.
type seenSettings struct {
	settings   map[http2.SettingID]uint32
	connWindow uint32 // the WINDOW_UPDATE on stream 0 (0: none)
}

// settingsListener reads each accepted connection's preface, SETTINGS and
// WINDOW_UPDATE frames (reporting them), and hands the connection on with
// those bytes still to be read, so the HTTP/2 server behind sees the
// connection whole.
type settingsListener struct {
	net.Listener
	mu   sync.Mutex
	seen []seenSettings
}

func (l *settingsListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	r := io.TeeReader(c, &buf)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	preface := make([]byte, len(http2.ClientPreface))
	s := seenSettings{settings: map[http2.SettingID]uint32{}}
	if _, err := io.ReadFull(r, preface); err == nil {
		fr := http2.NewFramer(nil, r)
		for range 2 { // SETTINGS, then the connection's WINDOW_UPDATE
			f, err := fr.ReadFrame()
			if err != nil {
				break
			}
			switch f := f.(type) {
			case *http2.SettingsFrame:
				f.ForeachSetting(func(st http2.Setting) error { s.settings[st.ID] = st.Val; return nil })
			case *http2.WindowUpdateFrame:
				if f.StreamID == 0 {
					s.connWindow = f.Increment
				}
			}
		}
	}
	c.SetReadDeadline(time.Time{})
	l.mu.Lock()
	l.seen = append(l.seen, s)
	l.mu.Unlock()
	return &replayConn{Conn: c, r: io.MultiReader(&buf, c)}, nil
}

func (l *settingsListener) last() seenSettings {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.seen) == 0 {
		return seenSettings{}
	}
	return l.seen[len(l.seen)-1]
}

type replayConn struct {
	net.Conn
	r io.Reader
}

func (c *replayConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// The http2 profile's settings a member is told on each connection
// (receive-window as SETTINGS_INITIAL_WINDOW_SIZE and the connection's
// window, header-table-size as SETTINGS_HEADER_TABLE_SIZE), and a body
// past those windows still comes whole (flow control works with them).
func TestMemberSettings(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.URL.Path == "/big" {
			io.WriteString(w, big)
			return
		}
		fmt.Fprintf(w, "got %d", len(b))
	})
	for i, tc := range []struct {
		name       string
		cfg        Config
		window     uint32 // SETTINGS_INITIAL_WINDOW_SIZE; 0: x/net's 4 MiB
		connWindow uint32 // the connection's WINDOW_UPDATE increment
		table      uint32 // SETTINGS_HEADER_TABLE_SIZE; 0: not sent (4096)
	}{
		{"profile defaults: 32 KB, 10 streams", Config{ReceiveWindow: 32 << 10, MaxConcurrentStreams: 10}, 32 << 10, 320<<10 - 65535, 0},
		{"16 KB, one stream: the connection's floor", Config{ReceiveWindow: 16 << 10, MaxConcurrentStreams: 1}, 16 << 10, 65535, 0},
		{"128 KB, 256 streams, header table 8192", Config{ReceiveWindow: 128 << 10, MaxConcurrentStreams: 256, HeaderTableSize: 8192}, 128 << 10, 32<<20 - 65535, 8192},
		{"no receive-window: x/net's windows", Config{MaxConcurrentStreams: 10, HeaderTableSize: 1024}, 4 << 20, 1 << 30, 1024},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := fmt.Sprintf("127.17.5.%d:0", 1+i)
			inner, err := net.Listen("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			ln := &settingsListener{Listener: inner}
			var p http.Protocols
			p.SetUnencryptedHTTP2(true)
			srv := &http.Server{Handler: handler, Protocols: &p}
			go srv.Serve(ln)
			t.Cleanup(func() { srv.Close() })

			pool := New(tc.cfg)
			t.Cleanup(pool.Close)
			c := openTo(t, pool, inner.Addr().String())
			c.SetDeadline(time.Now().Add(10 * time.Second))
			br := bufio.NewReader(c)
			body := strings.Repeat("x", 200<<10) // past every window above
			fmt.Fprintf(c, "POST /up HTTP/1.1\r\nHost: m\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
			if _, got := readResp(t, br); got != fmt.Sprintf("got %d", len(body)) {
				t.Fatalf("upload answered %q", got)
			}
			io.WriteString(c, "GET /big HTTP/1.1\r\nHost: m\r\n\r\n")
			if _, got := readResp(t, br); got != big {
				t.Fatalf("a %d-byte answer came back as %d bytes", len(big), len(got))
			}

			s := ln.last()
			if got := s.settings[http2.SettingInitialWindowSize]; got != tc.window {
				t.Errorf("SETTINGS_INITIAL_WINDOW_SIZE %d, want %d", got, tc.window)
			}
			if s.connWindow != tc.connWindow {
				t.Errorf("connection WINDOW_UPDATE %d, want %d", s.connWindow, tc.connWindow)
			}
			if got, ok := s.settings[http2.SettingHeaderTableSize]; got != tc.table || ok != (tc.table != 0) {
				t.Errorf("SETTINGS_HEADER_TABLE_SIZE %d (sent %v), want %d", got, ok, tc.table)
			}
			if got := s.settings[http2.SettingEnablePush]; got != 0 {
				t.Errorf("SETTINGS_ENABLE_PUSH %d, want 0", got)
			}
		})
	}
}
