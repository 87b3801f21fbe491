package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// loadMain drives many clients as fast as answers come back and prints the
// messages per second: the benchmark's load generator, pointed at a
// virtual server, at HAProxy, or straight at one member.
func loadMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	connect := fs.String("connect", "", "address:port to load")
	clients := fs.Int("clients", 1, "concurrent client connections")
	size := fs.Int("size", 64, "message size in bytes")
	frame := fs.String("frame", "length", "framing: length, line or raw")
	window := fs.Int("window", 1, "requests in flight per client")
	duration := fs.Duration("duration", 3*time.Second, "how long to run")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *connect == "" {
		return errors.New("load needs -connect")
	}
	if *frame == "raw" && *window > 1 {
		return errors.New("-frame raw cannot tell pipelined answers apart: use -window 1")
	}
	var total atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, *clients)
	ctx, cancel := context.WithTimeout(ctx, *duration)
	defer cancel()
	start := time.Now()
	for i := 0; i < *clients; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if err := loadOne(ctx, *connect, *frame, *size, max(*window, 1), &total); err != nil && ctx.Err() == nil {
				errs <- fmt.Errorf("client %d: %w", i+1, err)
			}
		}(i)
	}
	wg.Wait()
	el := time.Since(start)
	close(errs)
	for err := range errs {
		return err
	}
	n := total.Load()
	fmt.Fprintf(stdout, "load %s: %d clients, %d-byte %s messages, window %d: %d messages in %.1fs, %.0f msg/s\n",
		*connect, *clients, *size, *frame, *window, n, el.Seconds(), float64(n)/el.Seconds())
	return nil
}

// loadOne runs one client until ctx ends, counting answered messages.
func loadOne(ctx context.Context, addr, frame string, size, window int, total *atomic.Int64) error {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	go func() {
		<-ctx.Done()
		c.SetDeadline(time.Now())
	}()
	msg := request("L", 0, size)
	if frame == "line" {
		msg = msg[:len(msg)-1] // the newline makes it size bytes
	}
	r := bufio.NewReaderSize(c, 64<<10)
	w := bufio.NewWriterSize(c, 64<<10)
	var buf []byte
	for i := 0; i < window; i++ {
		if err := writeFramed(w, frame, msg); err != nil {
			return err
		}
	}
	for {
		if err := w.Flush(); err != nil {
			return err
		}
		a, err := readFramed(r, frame, buf)
		if err != nil {
			return err
		}
		if frame == "length" {
			buf = a
		}
		total.Add(1)
		if err := writeFramed(w, frame, msg); err != nil {
			return err
		}
		if r.Buffered() > 0 && window > 1 {
			continue // more answers are here: send their followers together
		}
	}
}
