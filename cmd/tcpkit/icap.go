package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"strings"

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
	preview := fs.Int("preview", 0, "the Preview its OPTIONS answer asks for (0: none)")
	ignore := fs.String("ignore", "", "its OPTIONS answer's Transfer-Ignore ('jpg, gif'): extensions not to be sent")
	ttl := fs.Int("ttl", 0, "its OPTIONS answer's Options-TTL in seconds (0: none)")
	istag := fs.String("istag", "", "the service's ISTag")
	perConn := fs.Int("per-conn", 0, "close a connection after this many requests without a word (0: keep it)")
	show := fs.String("show", "", "ICAP request header fields ('x-client-ip,user-agent') logged for each REQMOD and RESPMOD, with its URI")
	answer := fs.String("answer", "", "a field line ('X-Infection-Found: none') added to the ICAP head of every 204 and 200")
	decide := fs.Bool("decide-preview", false, "answer on the preview alone, never 100 Continue (a -header rewrite then carries the preview's bytes only)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *listen == "" {
		return errors.New("icap needs -listen")
	}
	if *preview < 0 || *ttl < 0 || *perConn < 0 {
		return errors.New("icap: -preview, -ttl and -per-conn are counts from 0")
	}
	if *answer != "" && !strings.Contains(*answer, ":") {
		return errors.New("icap: -answer is a field line 'Name: value'")
	}
	log := &lockedWriter{w: stdout}
	srv, err := icaptest.Listen(*listen, icaptest.Config{Block: *block, Header: *header, Value: *value, Add: *add,
		Preview: *preview, Ignore: *ignore, TTL: *ttl, ISTag: *istag, PerConn: *perConn, Show: fields(*show), Answer: *answer, DecidePreview: *decide,
		Log: func(l string) { log.printf("%s\n", l) }})
	if err != nil {
		return err
	}
	log.printf("icap listening on %s\n", srv.Addr())
	<-ctx.Done()
	return srv.Close()
}

// fields reads "a, B" as the lower-case names [a b].
func fields(v string) []string {
	var out []string
	for _, f := range strings.Split(v, ",") {
		if f = strings.ToLower(strings.TrimSpace(f)); f != "" {
			out = append(out, f)
		}
	}
	return out
}
