package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
)

// serverMain runs a labelled server until ctx ends.
func serverMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "", "address:port to listen on")
	label := fs.String("label", "S1", "label put in every answer")
	frame := fs.String("frame", "line", "message framing: line or raw")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *listen == "" {
		return errors.New("server needs -listen")
	}
	if *frame != "line" && *frame != "raw" {
		return fmt.Errorf("-frame %q: want line or raw", *frame)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	s := &labelServer{label: *label, raw: *frame == "raw", log: &lockedWriter{w: stdout}}
	s.log.printf("%s listening on %s\n", s.label, ln.Addr())
	return s.serve(ctx, ln)
}

// lockedWriter serializes log lines from many connections.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) printf(format string, a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, format, a...)
}

type labelServer struct {
	label string
	raw   bool
	log   *lockedWriter
}

func (s *labelServer) serve(ctx context.Context, ln net.Listener) error {
	var wg sync.WaitGroup
	conns := map[net.Conn]bool{}
	var mu sync.Mutex
	go func() {
		<-ctx.Done()
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
	}()
	defer wg.Wait()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		mu.Lock()
		conns[c] = true
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.handle(c)
			mu.Lock()
			delete(conns, c)
			mu.Unlock()
		}()
	}
}

// handle answers every message on one connection.
func (s *labelServer) handle(c net.Conn) {
	defer c.Close()
	from := c.RemoteAddr().String()
	s.log.printf("%s connection from %s\n", s.label, from)
	defer s.log.printf("%s connection from %s closed\n", s.label, from)
	answer := []byte(s.label + " Response\n")
	if s.raw {
		buf := make([]byte, 64<<10)
		for {
			n, err := c.Read(buf)
			if n > 0 {
				s.log.printf("%s received %q from %s\n", s.label, buf[:n], from)
				if _, werr := c.Write(answer); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if line != "" {
			s.log.printf("%s received %q from %s\n", s.label, strings.TrimRight(line, "\r\n"), from)
			if _, werr := c.Write(answer); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
