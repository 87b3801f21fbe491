package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/openltm/openltm/dataplane/rtsp"
)

// rtspServerMain is `tcpkit rtsp-server`: an RTSP member (RFC 2326)
// answering OPTIONS, DESCRIBE, SETUP, PLAY and TEARDOWN, which sends RTP
// packets naming itself to the client's client_port from its server_port
// (or interleaved on the control connection) from PLAY to TEARDOWN.
func rtspServerMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("rtsp-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "", "address:port to listen on (TCP)")
	label := fs.String("label", "rtsp1", "the server's name, in its answers and RTP payloads")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *listen == "" {
		return errors.New("rtsp-server: -listen is required")
	}
	s, err := rtsp.Listen(*listen, *label)
	if err != nil {
		return fmt.Errorf("rtsp-server: %v", err)
	}
	fmt.Fprintf(stdout, "rtsp-server %s listening on %s\n", *label, s.Addr())
	<-ctx.Done()
	s.Close()
	return nil
}
