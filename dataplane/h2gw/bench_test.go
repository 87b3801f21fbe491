package h2gw

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"runtime/metrics"
	"sync"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// benchEngine stands in for the HTTP engine: it answers every pipelined
// GET on c with a small response, writing what it has when it has read
// every request at hand.
func benchEngine(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	const resp = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nServer: bench\r\nContent-Length: 13\r\n\r\nhello, world\n"
	var out []byte
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return
		}
		if len(line) <= 2 { // the end of a head
			out = append(out, resp...)
			if br.Buffered() == 0 {
				if _, err := c.Write(out); err != nil {
					return
				}
				out = out[:0]
			}
		}
	}
}

// benchClient sends n GETs on one HTTP/2 connection to addr, keeping
// depth streams in flight (as h2load -m does), and reads every answer.
func benchClient(addr string, n, depth int) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	bw := bufio.NewWriterSize(c, 32<<10)
	br := bufio.NewReaderSize(c, 32<<10)
	fr := http2.NewFramer(bw, br)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	io.WriteString(bw, Preface)
	fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 30})
	fr.WriteWindowUpdate(0, 1<<30)
	var hbuf bytes.Buffer
	enc := hpack.NewEncoder(&hbuf)
	id, sent, done, inflight := uint32(1), 0, 0, 0
	for done < n {
		for sent < n && inflight < depth {
			hbuf.Reset()
			enc.WriteField(hpack.HeaderField{Name: ":method", Value: "GET"})
			enc.WriteField(hpack.HeaderField{Name: ":scheme", Value: "http"})
			enc.WriteField(hpack.HeaderField{Name: ":authority", Value: "bench.example"})
			enc.WriteField(hpack.HeaderField{Name: ":path", Value: "/index.html"})
			enc.WriteField(hpack.HeaderField{Name: "user-agent", Value: "bench"})
			fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hbuf.Bytes(), EndStream: true, EndHeaders: true})
			id += 2
			sent++
			inflight++
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		// Read until a stream ends and nothing more is at hand.
		for {
			f, err := fr.ReadFrame()
			if err != nil {
				return err
			}
			switch f := f.(type) {
			case *http2.MetaHeadersFrame:
				if s := f.PseudoValue("status"); s != "200" {
					return fmt.Errorf("status %s", s)
				}
				if f.StreamEnded() {
					done++
					inflight--
				}
			case *http2.DataFrame:
				if f.StreamEnded() {
					done++
					inflight--
				}
			case *http2.SettingsFrame:
				if !f.IsAck() {
					fr.WriteSettingsAck()
				}
			case *http2.GoAwayFrame, *http2.RSTStreamFrame:
				return fmt.Errorf("%v", f)
			}
			if inflight < depth && !framed(br) {
				break
			}
		}
	}
	return nil
}

// framed reports whether a whole frame is at hand: the client reads
// those before it sends more, as an event loop (h2load) does.
func framed(br *bufio.Reader) bool {
	n := br.Buffered()
	if n < 9 {
		return false
	}
	h, _ := br.Peek(3)
	return n >= 9+(int(h[0])<<16|int(h[1])<<8|int(h[2]))
}

// BenchmarkServe: conns HTTP/2 connections on loopback, each with 10
// streams in flight (h2load -m10), through Serve and a Pipe to an
// in-process engine that answers each request at once. Reported with
// the allocations: goroutines created and goroutine schedulings (the
// scheduler's sampled count of goroutines taken off a processor, times
// its sampling period: an estimate) per request.
func BenchmarkServe(b *testing.B) {
	for _, conns := range []int{1, 8} {
		b.Run(fmt.Sprintf("conns=%d", conns), func(b *testing.B) {
			benchServe(b, conns, 10)
		})
	}
}

func benchServe(b *testing.B, conns, depth int) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	cfg := &Config{MaxConcurrentStreams: 100}
	defer serveAll(ln, cfg, func() (net.Conn, error) {
		gw, eng := Pipe()
		go benchEngine(eng)
		return gw, nil
	})()
	samples := []metrics.Sample{{Name: "/sched/latencies:seconds"}, {Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(samples)
	sched0, created0 := histCount(samples[0]), samples[1].Value.Uint64()
	b.ReportAllocs()
	b.ResetTimer()
	per := (b.N + conns - 1) / conns
	errs := make(chan error, conns)
	var cw sync.WaitGroup
	for range conns {
		cw.Add(1)
		go func() {
			defer cw.Done()
			errs <- benchClient(ln.Addr().String(), per, depth)
		}()
	}
	cw.Wait()
	b.StopTimer()
	metrics.Read(samples)
	n := float64(per * conns)
	b.ReportMetric(float64(histCount(samples[0])-sched0)*8/n, "scheds/op")
	b.ReportMetric(float64(samples[1].Value.Uint64()-created0)/n, "goroutines/op")
	close(errs)
	for err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
}

func histCount(s metrics.Sample) uint64 {
	var n uint64
	for _, c := range s.Value.Float64Histogram().Counts {
		n += c
	}
	return n
}
