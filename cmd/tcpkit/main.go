// Command tcpkit holds the field tools the seed procedures used, as real
// programs for demos and transcripts:
//
//	tcpkit server -listen 127.0.0.34:9000 -label S1
//	    a labelled TCP server: answers each message with "S1 Response" and
//	    logs what it received from whom.
//	tcpkit client -connect 127.0.0.33:9000 -count 3 -interval 1s
//	    connects once, sends labelled messages at an interval (or one per
//	    line of standard input with -stdin) and prints each answer.
//
//	tcpkit tuxedo --wsl 127.0.70.11:6789 --wsh-range 10000-10499 --label S1 [--announce 127.0.70.1]
//	    a Tuxedo server: the WSL answers a client's first message with the
//	    WSH address and port to open next ("WSH 127.0.70.11:10017"); the
//	    WSH listeners over the range answer with the label.
//	tcpkit tuxedo-client --wsl 127.0.70.1:6789 [--count N] [--hold [--linger D]]
//	    the two-connection dance: WSL, then the WSH it names; prints which
//	    server answered.
//
//	tcpkit ldns -addr 127.0.114.5 -port 5353 -delay 127.0.112.1=40ms,127.0.113.1=5ms
//	    a local DNS server for the GSLB procedure: answers the GSLB's RTT
//	    probes after a delay chosen per probe source; with -ask NAME
//	    -server ADDR:PORT it asks the GSLB from its own address and prints
//	    each answer.
//
//	tcpkit server -listen 127.0.0.34:9001 -label S2 -frame length -crash-after 10
//	    a member speaking length-prefixed messages that echoes each request
//	    ("S2 Response to C1 message 3") and, with -crash-after, resets every
//	    connection and exits (status 3) when the next message comes: a
//	    member dying with requests in flight. SIGINT stops a server
//	    cleanly; SIGKILL abruptly.
//	tcpkit client -connect 127.0.0.43:9000 -frame length -size 65536 -window 8 -count 100 -summary
//	    an asynchronous client: up to -window requests in flight, each
//	    answer checked against the request it echoes, in order.
//	tcpkit load -connect 127.0.0.43:9000 -clients 8 -size 64 -duration 3s
//	    the benchmark's load: messages per second over many clients.
//
// Messages are lines by default (-frame line); -frame raw treats each read
// as one message, as the seed's tools did (one packet, one transaction);
// -frame length puts a 4-byte big-endian length before each message, the
// header that transactions above one segment need.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: tcpkit server -listen ADDR:PORT [-label S1] [-frame line|raw|length] [-echo] [-delay D] [-crash-after N] [-quiet]")
	fmt.Fprintln(w, "       tcpkit client -connect ADDR:PORT [-label C1] [-count N] [-interval D] [-stdin] [-reconnect] [-delay D] [-frame line|raw|length] [-size N] [-window N] [-summary]")
	fmt.Fprintln(w, "       tcpkit load -connect ADDR:PORT [-clients N] [-size N] [-frame length|line|raw] [-window N] [-duration D]")
	fmt.Fprintln(w, "       tcpkit tuxedo --wsl ADDR:PORT --wsh-range LOW-HIGH [--label S1] [--announce ADDR]")
	fmt.Fprintln(w, "       tcpkit tuxedo-client --wsl ADDR:PORT [--label C1] [--count N] [--hold [--linger D]]")
	fmt.Fprintln(w, "       "+ldnsUsage)
	fmt.Fprintln(w, "       tcpkit http -listen ADDR:PORT [-label W1] [-v]")
	fmt.Fprintln(w, "       tcpkit gateway -connect ADDR:PORT [-users 6] [-requests 4] [-conns 1] [-cookies]")
}

func main() {
	if len(os.Args) < 2 {
		usage(os.Stderr)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch os.Args[1] {
	case "server":
		err = serverMain(ctx, os.Args[2:], os.Stdout, os.Stderr)
	case "client":
		err = clientMain(ctx, os.Args[2:], os.Stdin, os.Stdout, os.Stderr)
	case "load":
		err = loadMain(ctx, os.Args[2:], os.Stdout, os.Stderr)
	case "tuxedo":
		err = tuxedoMain(ctx, os.Args[2:], os.Stdout, os.Stderr)
	case "tuxedo-client":
		err = tuxedoClientMain(ctx, os.Args[2:], os.Stdout, os.Stderr)
	case "ldns":
		err = ldnsMain(ctx, os.Args[2:], os.Stdout, os.Stderr)
	case "http":
		err = httpMain(ctx, os.Args[2:], os.Stdout, os.Stderr)
	case "gateway":
		err = gatewayMain(ctx, os.Args[2:], os.Stdout, os.Stderr)
	case "-h", "-help", "--help", "help":
		usage(os.Stdout)
		return
	default:
		usage(os.Stderr)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tcpkit:", err)
		if errors.Is(err, errCrashed) {
			os.Exit(3)
		}
		os.Exit(1)
	}
}
