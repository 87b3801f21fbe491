package main

import (
	"context"
	"errors"
	"flag"
	"io"

	"github.com/openltm/openltm/dataplane/icap/icaptest"
)

// icapMain runs an ICAP server as a stand-in for an antivirus or DLP
// service behind an internal virtual server, until ctx ends.
func icapMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("icap", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "", "address:port to listen on (ICAP's port is 1344)")
	block := fs.String("block", "", "refuse a request or response whose body holds this word with a 403 page")
	header := fs.String("header", "", "set this header of a message carrying it to -value (the message is then modified)")
	value := fs.String("value", "", "with -header, the new value")
	add := fs.String("add", "", "with -header, a field line ('Name: value') added to every message modified")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *listen == "" {
		return errors.New("icap needs -listen")
	}
	log := &lockedWriter{w: stdout}
	srv, err := icaptest.Listen(*listen, icaptest.Config{Block: *block, Header: *header, Value: *value, Add: *add,
		Log: func(l string) { log.printf("%s\n", l) }})
	if err != nil {
		return err
	}
	log.printf("icap listening on %s\n", srv.Addr())
	<-ctx.Done()
	return srv.Close()
}
