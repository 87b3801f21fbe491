package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"time"

	"golang.org/x/net/http2"
)

// settingsListener reads the start of each HTTP/2 connection it accepts
// (the preface, the client's SETTINGS and its first WINDOW_UPDATE on the
// connection) and hands the connection on with those bytes still to be
// read, so that a member can say what a proxy asked of it.
type settingsListener struct {
	net.Listener
}

// settingsConn is an accepted connection and what its client sent first.
type settingsConn struct {
	net.Conn
	r    io.Reader
	seen string
}

func (c *settingsConn) Read(p []byte) (int, error) { return c.r.Read(p) }

func (l settingsListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	r := io.TeeReader(c, &buf)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var seen []string
	preface := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(r, preface); err == nil && string(preface) == http2.ClientPreface {
		fr := http2.NewFramer(nil, r)
		for range 2 { // SETTINGS, then the connection's WINDOW_UPDATE
			f, err := fr.ReadFrame()
			if err != nil {
				break
			}
			switch f := f.(type) {
			case *http2.SettingsFrame:
				f.ForeachSetting(func(s http2.Setting) error {
					seen = append(seen, fmt.Sprintf("%s=%d", s.ID, s.Val))
					return nil
				})
			case *http2.WindowUpdateFrame:
				if f.StreamID == 0 {
					seen = append(seen, fmt.Sprintf("CONN_WINDOW=%d", 65535+f.Increment))
				}
			}
		}
	}
	c.SetReadDeadline(time.Time{})
	sort.Strings(seen)
	return &settingsConn{Conn: c, r: io.MultiReader(&buf, c), seen: strings.Join(seen, ",")}, nil
}

type settingsKey struct{}

// settingsContext keeps a connection's settings for its requests
// (http.Server.ConnContext).
func settingsContext(ctx context.Context, c net.Conn) context.Context {
	if sc, ok := c.(*settingsConn); ok {
		return context.WithValue(ctx, settingsKey{}, sc.seen)
	}
	return ctx
}

// settingsOf is what the client of a request's connection sent first;
// "none" for an HTTP/1 connection.
func settingsOf(ctx context.Context) string {
	if s, _ := ctx.Value(settingsKey{}).(string); s != "" {
		return s
	}
	return "none"
}
