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
//	tcpkit iiop-serve -listen 127.0.70.21:2809 -label S1
//	    a CORBA IIOP member: answers each GIOP Request with its label.
//	tcpkit iiop -connect 127.0.70.20:2809 -n 4 -keys a,b -ops delay:300,get
//	    pipelines GIOP requests on one connection and prints each reply's
//	    request id and body.
//
//	tcpkit ldns -addr 127.0.114.5 -port 5353 -delay 127.0.112.1=40ms,127.0.113.1=5ms
//	    a local DNS server for the GSLB procedure: answers the GSLB's RTT
//	    probes after a delay chosen per probe source; with -ask NAME
//	    -server ADDR:PORT it asks the GSLB from its own address and prints
//	    each answer.
//
//	tcpkit dns -listen 127.0.0.35:5353 -record 'www.example.net. 60 IN A 192.0.2.1'
//	    an authoritative DNS member (UDP and TCP) answering the records
//	    given and logging each query, for virtuals with a dns profile.
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
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// subcommands is what `tcpkit --help` lists: each tool, its usage, and
// what it is for.
var subcommands = []struct{ name, usage, what string }{
	{"server", "-listen ADDR:PORT [-label S1] [-frame line|raw|length] [-echo] [-delay D] [-crash-after N] [-close-after N] [-stall D] [-quiet]",
		"a labelled TCP member: answers each message with \"S1 Response\" (or echoes it), slowly or crashing on purpose"},
	{"client", "-connect ADDR:PORT [-label C1] [-count N] [-interval D] [-stdin] [-reconnect] [-delay D] [-frame line|raw|length] [-size N] [-window N] [-summary]",
		"a transaction client, synchronous or pipelined (-window), printing or checking each answer"},
	{"load", "-connect ADDR:PORT [-clients N] [-size N] [-frame length|line|raw] [-window N] [-duration D]",
		"the benchmark's load: messages per second over many synchronous clients"},
	{"tuxedo", "--wsl ADDR:PORT --wsh-range LOW-HIGH [--label S1] [--announce ADDR]",
		"a Tuxedo server: the WSL names a WSH port, the WSH listeners answer with the label"},
	{"tuxedo-client", "--wsl ADDR:PORT [--label C1] [--count N] [--hold [--linger D]]",
		"the Tuxedo client's two connections: WSL, then the WSH it names"},
	{"iiop-serve", "-listen ADDR:PORT [-label S1] [-quiet]",
		"a CORBA IIOP (GIOP) member: each Request answered with a Reply whose body is the label (operation delay:N after N ms, noreply never, say:TEXT with LABEL/TEXT, closeonce:LABEL with CloseConnection the first time), each LocateRequest with OBJECT_HERE; a line per request"},
	{"iiop", "-connect ADDR:PORT [-n N] [-keys K1,K2] [-ops OP1,OP2] [-id N] [-version 1.0|1.1|1.2] [-little] [-locate] [-fragment N] [-arrival] [-timeout D]",
		"a GIOP client: N requests pipelined on one connection (each in two fragments with -fragment), printing each reply's request id and body"},
	{"ldns", strings.TrimPrefix(ldnsUsage, "tcpkit ldns "),
		"a local DNS server for GSLB tests: delayed answers to RTT probes per source; -ask queries the GSLB from its own address"},
	{"ech-server", "-listen ADDR:PORT -key FILE -public-name NAME [-label E1]",
		"a TLS member taking Encrypted Client Hello with the HPKE key a gtm SVCB/HTTPS member's hpke-key names: tells each client the name it saw and whether the hello was encrypted"},
	{"ech-client", "-dns ADDR:PORT -name NAME -connect ADDR:PORT [-bind ADDR]",
		"a browser's ECH path: asks for NAME's HTTPS record, takes its ech SvcParam and opens TLS to -connect with NAME in the encrypted hello"},
	{"dns", "-listen ADDR:PORT [-label D1] -record 'NAME TTL IN TYPE DATA' ... [-doh [-cert FILE -key FILE] [-http1]]",
		"an authoritative DNS member over UDP and TCP answering the records given, logging each query; with -doh a DNS over HTTPS member (TLS with -cert and -key)"},
	{"doh-client", dohClientUsage,
		"a DNS over HTTPS client: the queries one after the other over one connection (HTTP/2, or HTTP/1.1 with -http1), answers printed as dig +short does, each query saying whether it reused the connection"},
	{"dns-primary", dnsPrimaryUsage,
		"a zone's primary for DNS Express: AXFR and IXFR over TCP, NOTIFY on every new serial of its zone file"},
	{"dnsauth", dnsAuthUsage,
		"a root, TLD or zone server for a resolver's root-hints: answers, referrals with glue, NXDOMAIN/NODATA with the SOA"},
	{"http", "-listen ADDR:PORT [-label W1] [-v] [-set-cookie NAME=VALUE] [-body FILE [-type T] [-chunked]] [-sum] [-echo-header NAME] [-peer [-peer-port]] [-h2c] [-trailer NAME=VALUE] [-delay D]",
		"an HTTP/1.1 member answering with its label, the request's cookies and X-Forwarded-For"},
	{"http3", "[-k] [-cacert FILE] [-servername NAME] [-i] [-X METHOD] [-d BODY] [-H 'Name: value'] [-n N] [-reuse] [-0rtt [-hold D]] [-timeout D] https://ADDR:PORT/path",
		"an HTTP/3 client, as curl with --http3 would be: prints each answer's protocol, status (and fields with -i) and body; -0rtt resumes and sends the requests in 0-RTT"},
	{"icap", "-listen ADDR:PORT [-block WORD] [-header NAME -value V] [-add 'Name: value'] [-preview N] [-ignore 'jpg, gif'] [-ttl S] [-istag TAG] [-per-conn N] [-decide-preview]",
		"an ICAP server (REQMOD, RESPMOD, OPTIONS; previews honoured): blocks a body holding WORD with a 403 page, sets header NAME of a message carrying it (adding -add), answers 204 otherwise; logs a line per exchange"},
	{"gateway", "-connect ADDR:PORT [-users 6] [-requests 4] [-conns 1] [-cookies] [-session] [-xff ADDR]",
		"an SSL-gateway-like client: many users multiplexed over a few reused connections"},
	{"sip-server", "-listen ADDR:PORT [-label S1] [-udp] [-quiet] [-headers] [-show NAME,...] [-body]",
		"a SIP member over TCP or UDP: INVITE gets 100 and 200 with SDP, ACK nothing, other requests 200; answers name the member (X-Member)"},
	{"sip-client", "-connect ADDR:PORT [-label C1] [-calls N] [-options N] [-options-method M] [-info N] [-register N] [-registrations user[=secs],...] [-compact] [-tag T] [-udp] [-summary] [-headers] [-wait-close] [-route VALUE] [-media M] [-show NAME,...]",
		"a SIP client on one connection: dialogs (INVITE, ACK, BYE) and OPTIONS, printing which member answered each"},
	{"radius-server", "-listen ADDR:PORT [-label R1] [-secret S]",
		"a RADIUS member over UDP: accepts every Access-Request, answers every Accounting-Request, naming itself in Reply-Message; logs User-Name and Calling-Station-Id"},
	{"radius-client", "-connect ADDR:PORT [-bind ADDR] [-secret S] [-user U] [-csid ID,ID,...] [-acct]",
		"a NAS: one request per Calling-Station-Id, each from a port of its own, printing the verified answer's code and Reply-Message"},
	{"dhcp-server", "-listen ADDR:PORT [-label D1] [-v6]",
		"a DHCP member: offers 10.9.0.N to every DISCOVER (echoing option 82), or answers a Relay-Forward's SOLICIT with a Relay-Reply; logs giaddr, hops, option 82, link and peer addresses"},
	{"dhcp-client", "-connect ADDR:PORT [-bind ADDR] [-v6] [-mac MAC] [-hops N] [-giaddr IP] [-answers N] [-wait D]",
		"a DHCP client: one DISCOVER (or SOLICIT) to the virtual, printing every answer that comes (type, server, yiaddr, option 82)"},
	{"tftp-server", "-listen ADDR:PORT [-dir DIR]",
		"a TFTP member (RFC 1350, blksize and tsize): reads and writes DIR's files, answering each transfer from a new port as real servers do"},
	{"gtp-server", "-listen ADDR:PORT [-label G1]",
		"a GTP peer: answers Echo Requests, GTPv2 Create Session, Modify Bearer and Delete Session (GTPv1 Create and Delete PDP Context) Requests with TEIDs of its own, and G-PDUs, naming itself in each answer"},
	{"gtp-client", "-connect ADDR:PORT [-bind ADDR] [-v 1|2] [-type echo|create|malformed|session] [-imsi DIGITS] [-apn NAME] [-n N] [-same] [-gtpu ADDR:PORT] [-delete]",
		"a GTP-C peer: N requests, each from a port of its own (-same: one request N times from one port), printing each answer's type, sequence number and the peer that answered; -type session: a subscriber's Create Session, N Modify Bearer Requests and G-PDUs (to -gtpu) on the TEIDs its answer gave, and a Delete Session Request with -delete"},
	{"rtsp-server", "-listen ADDR:PORT [-label M1]",
		"an RTSP member: OPTIONS, DESCRIBE, SETUP, PLAY, TEARDOWN; from PLAY to TEARDOWN it sends RTP packets naming itself to the client's client_port (or interleaved)"},
	{"sflow", "-listen ADDR:PORT [-kind flow|counters|all] [-match REGEXP] [-count N]",
		"an sFlow collector: prints each sample of the sFlow v5 datagrams it receives on one line, its records' fields by the specification's names"},
	{"rtsp-client", "-connect ADDR:PORT -bind ADDR [-path /media] [-packets N] [-interleaved]",
		"an RTSP player: OPTIONS, DESCRIBE, SETUP, PLAY (each on its own connection, or one with -interleaved), waits for N RTP packets on its client_port and prints where they came from, then TEARDOWN"},
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: tcpkit COMMAND [flags]   (tcpkit COMMAND -h lists a command's flags)")
	fmt.Fprintln(w)
	for _, c := range subcommands {
		fmt.Fprintf(w, "  %s\n      %s\n      tcpkit %s %s\n", c.name, c.what, c.name, c.usage)
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is tcpkit with its arguments and streams, returning the exit status:
// 0, 1 for a failure, 2 for usage errors, 3 for a server that crashed on
// purpose (-crash-after).
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) < 1 {
		usage(stderr)
		return 2
	}
	var err error
	switch args[0] {
	case "server":
		err = serverMain(ctx, args[1:], stdout, stderr)
	case "client":
		err = clientMain(ctx, args[1:], stdin, stdout, stderr)
	case "load":
		err = loadMain(ctx, args[1:], stdout, stderr)
	case "tuxedo":
		err = tuxedoMain(ctx, args[1:], stdout, stderr)
	case "iiop-serve":
		err = iiopServeMain(ctx, args[1:], stdout, stderr)
	case "iiop":
		err = iiopClientMain(ctx, args[1:], stdout, stderr)
	case "tuxedo-client":
		err = tuxedoClientMain(ctx, args[1:], stdout, stderr)
	case "ldns":
		err = ldnsMain(ctx, args[1:], stdout, stderr)
	case "ech-server":
		err = echServerMain(ctx, args[1:], stdout, stderr) // ech.go
	case "ech-client":
		err = echClientMain(ctx, args[1:], stdout, stderr) // ech.go
	case "dns":
		err = dnsMain(ctx, args[1:], stdout, stderr) // dns.go
	case "doh-client":
		err = dohClientMain(ctx, args[1:], stdout, stderr) // dohclient.go
	case "dns-primary":
		err = dnsPrimaryMain(ctx, args[1:], stdout, stderr) // dnsprimary.go
	case "dnsauth":
		err = dnsAuthMain(ctx, args[1:], stdout, stderr) // dnsauth.go
	case "http":
		err = httpMain(ctx, args[1:], stdout, stderr)
	case "http3":
		err = http3Main(ctx, args[1:], stdout, stderr)
	case "icap":
		err = icapMain(ctx, args[1:], stdout, stderr) // icap.go
	case "gateway":
		err = gatewayMain(ctx, args[1:], stdout, stderr)
	case "sip-server":
		err = sipServerMain(ctx, args[1:], stdout, stderr) // sip.go
	case "sip-client":
		err = sipClientMain(ctx, args[1:], stdout, stderr)
	case "radius-server":
		err = radiusServerMain(ctx, args[1:], stdout, stderr) // radius.go
	case "radius-client":
		err = radiusClientMain(ctx, args[1:], stdout, stderr)
	case "dhcp-server":
		err = dhcpServerMain(ctx, args[1:], stdout, stderr) // dhcp.go
	case "dhcp-client":
		err = dhcpClientMain(ctx, args[1:], stdout, stderr)
	case "gtp-server":
		err = gtpServerMain(ctx, args[1:], stdout, stderr) // gtp.go
	case "gtp-client":
		err = gtpClientMain(ctx, args[1:], stdout, stderr) // gtp.go
	case "tftp-server":
		err = tftpServerMain(ctx, args[1:], stdout, stderr) // tftp.go
	case "rtsp-server":
		err = rtspServerMain(ctx, args[1:], stdout, stderr) // rtsp.go
	case "rtsp-client":
		err = rtspClientMain(ctx, args[1:], stdout, stderr)
	case "sflow":
		err = sflowMain(ctx, args[1:], stdout, stderr) // sflow.go
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return 0
	default:
		fmt.Fprintf(stderr, "tcpkit: unknown command %q\n", args[0])
		usage(stderr)
		return 2
	}
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0 // the flag set printed the command's flags
	case errors.Is(err, errCrashed):
		fmt.Fprintln(stderr, "tcpkit:", err)
		return 3
	case err != nil:
		fmt.Fprintln(stderr, "tcpkit:", err)
		return 1
	}
	return 0
}
