package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"regexp"

	"github.com/openltm/openltm/dataplane/sflow/sflowdec"
)

// sflowMain is `tcpkit sflow`: an sFlow collector printing each sample of
// the datagrams it receives on one line (FLOW or COUNTERS, the source,
// and each record's fields by the specification's names).
func sflowMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sflow", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "", "address:port to receive datagrams on (UDP)")
	kind := fs.String("kind", "all", "the samples printed: flow, counters or all")
	match := fs.String("match", "", "print only the samples whose line matches this regular expression")
	count := fs.Int("count", 0, "exit after printing this many samples (0: run until stopped)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *listen == "" {
		return errors.New("sflow: -listen is required")
	}
	if *kind != "all" && *kind != "flow" && *kind != "counters" {
		return fmt.Errorf("sflow: -kind %q: expected flow, counters or all", *kind)
	}
	var re *regexp.Regexp
	if *match != "" {
		var err error
		if re, err = regexp.Compile(*match); err != nil {
			return fmt.Errorf("sflow: -match: %v", err)
		}
	}
	a, err := netip.ParseAddrPort(*listen)
	if err != nil {
		return fmt.Errorf("sflow: -listen: %v", err)
	}
	c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(a))
	if err != nil {
		return err
	}
	defer c.Close()
	go func() { <-ctx.Done(); c.Close() }()
	buf := make([]byte, 65536)
	printed := 0
	for {
		n, err := c.Read(buf)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		d, err := sflowdec.Decode(buf[:n])
		if err != nil {
			fmt.Fprintln(stderr, "tcpkit sflow:", err)
			continue
		}
		for _, s := range d.Samples {
			if (*kind == "flow" && !s.Flow) || (*kind == "counters" && s.Flow) {
				continue
			}
			line := s.String()
			if re != nil && !re.MatchString(line) {
				continue
			}
			fmt.Fprintln(stdout, line)
			printed++
			if *count > 0 && printed >= *count {
				return nil
			}
		}
	}
}
