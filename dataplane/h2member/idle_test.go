package h2member

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// idleConn is a member connection with an idle timeout of its own
// (h2member.IdleTimer), which notes its Close.
type idleConn struct {
	net.Conn
	idle   time.Duration
	closed atomic.Bool
}

func (c *idleConn) IdleTimeout() time.Duration { return c.idle }

func (c *idleConn) Close() error {
	c.closed.Store(true)
	return c.Conn.Close()
}

// TestIdleTimerReplacesProfile: a member connection whose Dialer gives
// it its own idle timeout closes once no stream has been open on it for
// that long, whether the profile's connection-idle-timeout is none or
// longer; a stream open past the timeout keeps it; without one (0) the
// profile's stands.
func TestIdleTimerReplacesProfile(t *testing.T) {
	var release atomic.Pointer[chan struct{}] // each subtest's
	mux := http.NewServeMux()
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-*release.Load():
		case <-r.Context().Done():
		}
		io.WriteString(w, "slow")
	})
	mux.Handle("/", testHandler())
	ln, _ := h2cMember(t, "127.255.137.1:0", mux)
	addr := ln.Addr().String()
	remote, _ := net.ResolveTCPAddr("tcp", addr)
	for _, tc := range []struct {
		name    string
		profile time.Duration // connection-idle-timeout
		own     time.Duration // the connection's own
		closes  bool          // closed within the wait
	}{
		{"own, profile none", 0, 300 * time.Millisecond, true},
		{"own shorter than profile", time.Hour, 300 * time.Millisecond, true},
		{"own longer than profile", 200 * time.Millisecond, 1200 * time.Millisecond, true},
		{"none of its own, profile none", 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &Stats{} // the counted wrapper must not hide the IdleTimer
			p := New(Config{IdleTimeout: tc.profile, Stats: st})
			defer p.Close()
			var dialed atomic.Pointer[idleConn]
			open := func() net.Conn {
				c, err := p.Open(context.Background(), Target{Key: addr, Remote: remote, Dial: func(ctx context.Context) (net.Conn, error) {
					var d net.Dialer
					c, err := d.DialContext(ctx, "tcp", addr)
					if err != nil {
						return nil, err
					}
					ic := &idleConn{Conn: c, idle: tc.own}
					dialed.Store(ic)
					return ic, nil
				}})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
				c.SetDeadline(time.Now().Add(10 * time.Second))
				return c
			}
			if tc.own > 0 {
				// A stream open for three timeouts keeps the connection.
				rel := make(chan struct{})
				release.Store(&rel)
				c := open()
				io.WriteString(c, "GET /slow HTTP/1.1\r\nHost: a\r\n\r\n")
				time.Sleep(3 * tc.own)
				if dialed.Load().closed.Load() {
					t.Fatal("closed with a stream open")
				}
				close(rel)
				if _, body := readResp(t, bufio.NewReader(c)); body != "slow" {
					t.Fatalf("slow: %q", body)
				}
			} else {
				c := open()
				io.WriteString(c, "GET /echo HTTP/1.1\r\nHost: a\r\n\r\n")
				readResp(t, bufio.NewReader(c))
			}
			first := dialed.Load()
			if tc.profile > 0 && tc.own > tc.profile {
				// The profile's shorter timeout does not close it.
				time.Sleep(3 * tc.profile)
				if first.closed.Load() {
					t.Fatal("closed at the profile's timeout, not its own")
				}
			}
			// Idle now: wait up to 5 s (bounded) for it to close.
			deadline := time.Now().Add(5 * time.Second)
			for !first.closed.Load() && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
			if first.closed.Load() != tc.closes {
				t.Fatalf("closed %v after 5 s idle, want %v", first.closed.Load(), tc.closes)
			}
			if !tc.closes {
				return
			}
			if st.Connections.Load() != 0 {
				t.Errorf("current connections %d after the idle close, want 0", st.Connections.Load())
			}
			// The next request dials a new connection.
			c := open()
			io.WriteString(c, "GET /echo HTTP/1.1\r\nHost: a\r\n\r\n")
			readResp(t, bufio.NewReader(c))
			if dialed.Load() == first || st.TotalConnections.Load() != 2 {
				t.Errorf("after the idle close: total connections %d, want 2 (a new dial)", st.TotalConnections.Load())
			}
		})
	}
}
