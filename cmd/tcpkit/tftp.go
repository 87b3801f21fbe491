package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"

	"github.com/openltm/openltm/dataplane/tftp"
)

// tftpServerMain is `tcpkit tftp-server`: a TFTP member (RFC 1350 with
// blksize and tsize) serving and receiving the files of a directory,
// each transfer from a new port of its own as real servers answer; it
// logs each request and how it ended.
func tftpServerMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("tftp-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "", "address:port to listen on (UDP)")
	dir := fs.String("dir", ".", "the directory read and written")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *listen == "" {
		return errors.New("tftp-server: -listen is required")
	}
	a, err := netip.ParseAddrPort(*listen)
	if err != nil {
		return fmt.Errorf("tftp-server: -listen: %v", err)
	}
	c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(a))
	if err != nil {
		return err
	}
	var mu sync.Mutex
	s := &tftp.Server{Dir: *dir, Log: func(m string) {
		mu.Lock()
		fmt.Fprintln(stdout, m)
		mu.Unlock()
	}}
	go func() { <-ctx.Done(); c.Close() }()
	return s.Serve(c)
}
