// Command ltmd is openltm's daemon: it owns the configuration, runs the
// dataplane and answers tmsh on a Unix socket. It runs in the foreground
// and logs to stderr; stop it with SIGINT or SIGTERM.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/openltm/openltm/control"
	"github.com/openltm/openltm/daemon"
	"github.com/openltm/openltm/dataplane/evloop"
)

func main() {
	fs := flag.NewFlagSet("ltmd", flag.ContinueOnError)
	stateDir := fs.String("state-dir", "", "state directory (default $OPENLTM_STATE_DIR, else ~/.local/state/openltm)")
	socket := fs.String("socket", "", "control socket (default $OPENLTM_SOCKET, else a per-user path)")
	level := fs.String("log-level", "info", "log level: debug, info, warn or error")
	busyPoll := fs.String("busy-poll", "auto", "how long an event loop polls after its last events before it sleeps: a duration (0: sleep at once), or auto: "+daemon.DefaultBusyPoll.String()+", except that loops serving a few exchanges each poll only while a trial finds it raises the rate, and hold their threads otherwise, and loops on one exchange each, several at once, hold; or hold: a loop serving a few exchanges waits for their events on a thread it holds instead of polling")
	endpoints := fs.String("cluster-endpoints", "", "comma-separated etcd client URLs of the device group's etcd cluster (none: the device is standalone)")
	clusterDir := fs.String("cluster-dir", "", "trust files: device.crt, device.key, ca.crt and, on devices that add others, ca.key (default STATE-DIR/cluster)")
	mgmt := fs.String("management-address", "", "host:port serving the trust exchange to peers (ca-devices add { ADDRESS })")
	credFile := fs.String("admin-credentials", "", "file holding user:password, what a peer adding this device to the trust domain must present")
	failoverTime := fs.Duration("failover-time", 0, "how long after the active device is lost a standby takes over its traffic groups (default 2s; etcd's minimum lease)")
	metricsAddr := fs.String("metrics-address", "", "host:port serving Prometheus metrics at /metrics (none: not served)")
	sendBatch := fs.String("send-batch", "auto", "how an event loop sends the writes it gathers over a batch of events: auto: to all their sockets with one system call (io_uring) where the kernel allows it, else one each; off: one system call each")
	var geoipDBs stringList
	fs.Var(&geoipDBs, "geoip-db", "a MaxMind DB (.mmdb) geolocation database for GTM topology and whereis (GeoLite2/GeoIP2 City or Country, DB-IP lite, ASN or ISP); repeat for several; every *.mmdb in STATE-DIR/geoip is loaded too")
	var rootHints stringList
	fs.Var(&rootHints, "root-hints", "ADDR or ADDR:PORT of a root server a net dns-resolver resolves from the names none of its forward zones holds; repeat for several (default: the Internet's root servers)")
	ownNS := fs.Bool("own-namespace", false, "ltmd owns its network namespace (no other program serves or connects there): wildcard virtual servers (destination 0.0.0.0:any mask any, 0.0.0.0:80 mask any, the :: forms) are served, taking every connection of the namespace no more specific virtual takes, the connections ltmd makes to its members, monitors' targets, nameservers, log and auth servers and rules' literal destinations excepted; without it they are kept with a warning")
	procs := fs.String("procs", "auto", "processors to run Go code on: a number, or auto: all of them while the event loops need them, one while they serve a moderate load (with GOMAXPROCS in the environment, auto keeps that number)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `usage: ltmd [--state-dir DIR] [--socket PATH] [--log-level LEVEL] [--busy-poll DURATION|auto|hold] [--procs N|auto]
            [--send-batch auto|off] [--geoip-db FILE ...] [--root-hints ADDR[:PORT] ...]
            [--own-namespace]
            [--cluster-endpoints URLS [--cluster-dir DIR] [--management-address HOST:PORT]
             [--admin-credentials FILE] [--failover-time DURATION]] [--metrics-address HOST:PORT]

ltmd is openltm's daemon: it keeps the configuration (a bbolt store of
numbered generations in the state directory), runs the virtual servers,
monitors, persistence, iRules and the GSLB DNS server, and answers tmsh on
a Unix socket. It runs in the foreground, logs to stderr and stops on
SIGINT or SIGTERM; run it under a supervisor, or let tmsh start one.

With --cluster-endpoints the device joins the device group that lists it
(cm device-group) in that etcd cluster: commits go through the group,
its changes are applied here, and floating virtual addresses are served
only while the device is active for their traffic group.

With --own-namespace ltmd serves wildcard virtual servers (forwarding
virtuals, outbound proxies: destination 0.0.0.0:any mask any): run it so
only in a network namespace of its own (a container's, or ip netns exec),
where every connection to an address of the namespace is its to take.

flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(os.Args[1:]); err != nil {
		if err == flag.ErrHelp {
			os.Exit(0)
		}
		os.Exit(2)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "ltmd: unexpected arguments: %v\n", fs.Args())
		os.Exit(2)
	}
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(*level)); err != nil {
		fmt.Fprintf(os.Stderr, "ltmd: --log-level: %v\n", err)
		os.Exit(2)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lv}))

	paths := control.ResolvePaths(*stateDir, *socket)
	if err := os.MkdirAll(paths.StateDir, 0o700); err != nil {
		logger.Error("cannot create the state directory", "dir", paths.StateDir, "err", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var governed evloop.Governed
	switch n, err := strconv.Atoi(*procs); {
	case *procs == "auto":
		governed.Procs = true
	case err == nil && n > 0:
		runtime.GOMAXPROCS(n)
	default:
		fmt.Fprintf(os.Stderr, "ltmd: --procs: %q is neither a positive number nor auto\n", *procs)
		os.Exit(2)
	}
	poll := daemon.DefaultBusyPoll
	switch d, err := time.ParseDuration(*busyPoll); {
	case *busyPoll == "auto":
		governed.Polling = true
	case *busyPoll == "hold":
		evloop.SetHolding(true)
	case err == nil && d >= 0:
		poll = d
	default:
		fmt.Fprintf(os.Stderr, "ltmd: --busy-poll: %q is neither a duration of 0 or more (200us) nor auto or hold\n", *busyPoll)
		os.Exit(2)
	}
	switch *sendBatch {
	case "auto":
	case "off":
		evloop.SetSendBatching(false)
	default:
		fmt.Fprintf(os.Stderr, "ltmd: --send-batch: %q is neither auto nor off\n", *sendBatch)
		os.Exit(2)
	}
	evloop.Govern(governed)
	defer evloop.StopGoverning()
	opts := daemon.Options{StateDir: paths.StateDir, Logger: logger, BusyPoll: poll, MetricsAddress: *metricsAddr, GeoIPFiles: geoipDBs, OwnNamespace: *ownNS}
	for _, h := range rootHints {
		ap, err := netip.ParseAddrPort(h)
		if err != nil {
			a, aerr := netip.ParseAddr(h)
			if aerr != nil {
				fmt.Fprintf(os.Stderr, "ltmd: --root-hints: %q is neither ADDR nor ADDR:PORT\n", h)
				os.Exit(2)
			}
			ap = netip.AddrPortFrom(a, 53)
		}
		opts.RootHints = append(opts.RootHints, ap)
	}
	if *endpoints != "" {
		co := &daemon.ClusterOptions{Dir: *clusterDir, ManagementAddress: *mgmt, LeaseTTL: *failoverTime}
		for _, ep := range strings.Split(*endpoints, ",") {
			if ep = strings.TrimSpace(ep); ep != "" {
				co.Endpoints = append(co.Endpoints, ep)
			}
		}
		if *credFile != "" {
			b, err := os.ReadFile(*credFile)
			if err != nil {
				fmt.Fprintf(os.Stderr, "ltmd: --admin-credentials: %v\n", err)
				os.Exit(2)
			}
			co.Credentials = strings.TrimSpace(string(b))
			if !strings.Contains(co.Credentials, ":") {
				fmt.Fprintf(os.Stderr, "ltmd: --admin-credentials: %s must hold user:password\n", *credFile)
				os.Exit(2)
			}
		}
		opts.Cluster = co
	} else if *mgmt != "" || *credFile != "" || *clusterDir != "" || *failoverTime != 0 {
		fmt.Fprintln(os.Stderr, "ltmd: --management-address, --admin-credentials, --cluster-dir and --failover-time need --cluster-endpoints")
		os.Exit(2)
	}
	if err := daemon.Serve(ctx, opts, paths.Socket); err != nil {
		logger.Error("cannot serve", "socket", paths.Socket, "state", paths.StateDir, "err", err)
		os.Exit(1)
	}
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(v string) error {
	*l = append(*l, v)
	return nil
}
