package h2gw

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// TestPipe: what one end writes the other reads, in order and buffered
// (a write does not wait for the reader); CloseWrite gives the reader EOF
// after the rest; Close makes the other end's writes fail and wakes a
// blocked read on the closing end.
func TestPipe(t *testing.T) {
	a, b := Pipe()
	for _, m := range []string{"GET / HTTP/1.1\r\n\r\n", "GET /2 HTTP/1.1\r\n\r\n"} {
		if _, err := a.Write([]byte(m)); err != nil { // no reader yet: buffered
			t.Fatal(err)
		}
	}
	buf := make([]byte, 64)
	n, err := b.Read(buf)
	if err != nil || string(buf[:n]) != "GET / HTTP/1.1\r\n\r\nGET /2 HTTP/1.1\r\n\r\n" {
		t.Fatalf("read %q %v: writes made together are read together", buf[:n], err)
	}
	if _, err := b.Write([]byte("answer")); err != nil {
		t.Fatal(err)
	}
	b.(*pipeConn).CloseWrite()
	got, err := io.ReadAll(a)
	if err != nil || string(got) != "answer" {
		t.Fatalf("after CloseWrite: %q %v", got, err)
	}

	// Close wakes a read blocked on the same end, and the peer's writes fail.
	c, d := Pipe()
	errc := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 8))
		errc <- err
	}()
	time.Sleep(10 * time.Millisecond) // let the read block (not needed for the result)
	c.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("blocked read after Close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not wake the blocked read")
	}
	if _, err := d.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("write to a closed peer: %v", err)
	}
	if _, err := d.Read(make([]byte, 8)); err != io.EOF {
		t.Fatalf("read from a closed peer: %v, want EOF", err)
	}
}

// TestPipeBackpressure: a writer waits while pipeLimit bytes are unread,
// and goes on once the reader takes them.
func TestPipeBackpressure(t *testing.T) {
	a, b := Pipe()
	big := make([]byte, pipeLimit)
	if _, err := a.Write(big); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		a.Write([]byte("more"))
		close(done)
	}()
	select {
	case <-done:
		t.Fatal("a write past the limit did not wait")
	case <-time.After(50 * time.Millisecond):
	}
	if _, err := io.ReadFull(b, big); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the writer did not go on once the reader took the bytes")
	}
}
