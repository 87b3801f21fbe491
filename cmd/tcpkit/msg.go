package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Message framing shared by the server and the clients beyond the seed's
// one-line tools: "line" (a newline ends a message), "raw" (one read is
// one message) and "length" (a 4-byte big-endian length, then the bytes),
// the header that larger transactions need (seed 000 §2.7).

const maxLengthMsg = 64 << 20

// writeFramed writes one message in the given framing.
func writeFramed(w io.Writer, frame string, b []byte) error {
	switch frame {
	case "length":
		var hdr [4]byte
		binary.BigEndian.PutUint32(hdr[:], uint32(len(b)))
		bufs := net.Buffers{hdr[:], b}
		_, err := bufs.WriteTo(w)
		return err
	case "line":
		bufs := net.Buffers{b, []byte{'\n'}}
		_, err := bufs.WriteTo(w)
		return err
	}
	_, err := w.Write(b)
	return err
}

// readFramed reads one message; buf is reused when large enough.
func readFramed(r *bufio.Reader, frame string, buf []byte) ([]byte, error) {
	switch frame {
	case "length":
		var hdr [4]byte
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return nil, err
		}
		n := binary.BigEndian.Uint32(hdr[:])
		if n > maxLengthMsg {
			return nil, fmt.Errorf("message of %d bytes is over %d", n, maxLengthMsg)
		}
		if cap(buf) < int(n) {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		_, err := io.ReadFull(r, buf)
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return buf, err
	case "line":
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A long line: gather it.
			full := append(buf[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = r.ReadSlice('\n')
				full = append(full, line...)
			}
			line = full
		}
		if err != nil {
			if len(line) > 0 && errors.Is(err, io.EOF) {
				return bytes.TrimRight(line, "\r\n"), nil
			}
			return nil, err
		}
		return bytes.TrimRight(line, "\r\n"), nil
	}
	if cap(buf) < 64<<10 {
		buf = make([]byte, 64<<10)
	}
	n, err := r.Read(buf[:cap(buf)])
	if n > 0 {
		return bytes.TrimRight(buf[:n], "\r\n"), nil
	}
	return nil, err
}

// request builds message i of a client: "C1 message 7", padded with dots
// to size bytes when size is larger.
func request(label string, i, size int) []byte {
	b := []byte(fmt.Sprintf("%s message %d", label, i))
	if size > len(b) {
		pad := bytes.Repeat([]byte{'.'}, size-len(b))
		b = append(b, pad...)
	}
	return b
}

// answerLabel splits an echoed answer "S1 Response to <request>" into its
// label part and the request it echoes; a plain "S1 Response" echoes
// nothing.
func answerLabel(a []byte) (label string, echoed []byte, ok bool) {
	if i := bytes.Index(a, []byte(" to ")); i >= 0 {
		return string(a[:i]), a[i+4:], true
	}
	return string(a), nil, false
}

// msgClient is the client of -frame length, -window and -size: several
// requests in flight on one connection (an asynchronous client, seed 000
// §1.3) and answers checked against the order of the requests when the
// server echoes them.
type msgClient struct {
	label    string
	frame    string
	size     int
	window   int
	count    int
	interval time.Duration
	timeout  time.Duration
	summary  bool
	out      io.Writer
}

// run sends count requests over c and reads as many answers.
func (m *msgClient) run(ctx context.Context, c net.Conn) error {
	window := max(m.window, 1)
	slots := make(chan struct{}, window)
	var sendErr atomic.Value
	go func() {
		w := bufio.NewWriterSize(c, 64<<10)
		for i := 0; i < m.count; i++ {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			if i > 0 && m.interval > 0 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(m.interval):
				}
			}
			if err := writeFramed(w, m.frame, request(m.label, i+1, m.size)); err != nil {
				sendErr.Store(err)
				return
			}
			// Flush when the window is full or nothing more is due now:
			// a pipelined burst leaves in few segments.
			if len(slots) == cap(slots) || i == m.count-1 || m.interval > 0 {
				if err := w.Flush(); err != nil {
					sendErr.Store(err)
					return
				}
			}
		}
	}()
	r := bufio.NewReaderSize(c, 64<<10)
	counts := map[string]int{}
	var buf []byte
	for i := 0; i < m.count; i++ {
		c.SetReadDeadline(time.Now().Add(m.timeout))
		a, err := readFramed(r, m.frame, buf)
		if err != nil {
			if e, ok := sendErr.Load().(error); ok {
				err = e
			}
			m.report(counts, i)
			return fmt.Errorf("answer %d: %w", i+1, err)
		}
		if m.frame == "length" {
			buf = a
		}
		label, echoed, ok := answerLabel(a)
		want := request(m.label, i+1, m.size)
		if ok && !bytes.Equal(echoed, want) {
			m.report(counts, i)
			return fmt.Errorf("answer %d is for another request: %.40q", i+1, echoed)
		}
		counts[label]++
		if !m.summary {
			fmt.Fprintf(m.out, "%s message %d -> %s\n", m.label, i+1, label)
		}
		<-slots
	}
	m.report(counts, m.count)
	return nil
}

// report prints the summary line: answers and who gave them.
func (m *msgClient) report(counts map[string]int, n int) {
	if !m.summary {
		return
	}
	labels := make([]string, 0, len(counts))
	for l := range counts {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	parts := make([]string, 0, len(labels))
	for _, l := range labels {
		parts = append(parts, fmt.Sprintf("%s %d", l, counts[l]))
	}
	fmt.Fprintf(m.out, "%s: %d answers in order; %s\n", m.label, n, strings.Join(parts, ", "))
}

// crashGate lets a server die abruptly after a number of messages, with
// every connection reset and the last message unanswered, as a crashing
// server does (seed 000 §2.6).
type crashGate struct {
	after int64
	seen  atomic.Int64
	once  sync.Once
	fire  func()
}

// pass reports whether the message may be answered.
func (g *crashGate) pass() bool {
	if g == nil || g.after <= 0 {
		return true
	}
	if g.seen.Add(1) <= g.after {
		return true
	}
	g.once.Do(g.fire)
	return false
}
