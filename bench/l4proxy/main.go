// Command l4proxy runs the openltm dataplane alone with one L4 virtual
// server in front of a pool, for the side-by-side benchmark in
// bench/run.sh (no daemon, no store: only the code on the traffic path).
//
//	l4proxy -listen 127.30.0.11:80 -members 127.30.0.2:8080,127.30.0.3:8080
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/openltm/openltm/dataplane"
)

func main() {
	listen := flag.String("listen", "127.30.0.11:80", "virtual server destination")
	members := flag.String("members", "", "comma-separated member addresses")
	mode := flag.String("mode", "round-robin", "load-balancing-mode")
	snat := flag.String("snat", "none", "source-address-translation: none or automap")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile to this file until stopped")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "l4proxy:", err)
			os.Exit(1)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	dst, err := netip.ParseAddrPort(*listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "l4proxy: -listen:", err)
		os.Exit(2)
	}
	pool := &dataplane.Pool{Name: "/Common/bench_pool", LBMode: dataplane.LBMode(*mode)}
	for _, m := range strings.Split(*members, ",") {
		a, err := netip.ParseAddrPort(strings.TrimSpace(m))
		if err != nil {
			fmt.Fprintln(os.Stderr, "l4proxy: -members:", err)
			os.Exit(2)
		}
		pool.Members = append(pool.Members, dataplane.Member{Node: "/Common/" + a.Addr().String(), Addr: a})
	}
	cfg := &dataplane.Config{
		Virtuals: map[string]*dataplane.Virtual{"/Common/bench_vs": {
			Name: "/Common/bench_vs", Destination: dst, Enabled: true,
			TranslateAddress: true, TranslatePort: true, Pool: pool.Name,
			SNAT: dataplane.SNAT{Type: dataplane.SNATType(*snat)},
		}},
		Pools: map[string]*dataplane.Pool{pool.Name: pool},
	}
	p := dataplane.New(dataplane.Options{Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
	if err := p.Apply(nil, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "l4proxy:", err)
		os.Exit(1)
	}
	fmt.Println("l4proxy: listening on", dst)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	p.Close()
}
