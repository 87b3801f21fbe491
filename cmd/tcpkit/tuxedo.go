package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The Tuxedo workstation protocol, as the seed describes it and as far as a
// load balancer sees it: a client opens a WSL connection to a fixed port
// and sends a request; the WSL answers, inside the payload, with the
// address and port of a WSH handler from its configured range; the client
// then opens that WSH connection and makes its calls there. The emulator
// speaks lines:
//
//	client -> WSL:  CONNECT C1
//	WSL -> client:  WSH 127.0.70.11:10017
//	client -> WSH:  CALL C1
//	WSH -> client:  S1 Response

// tuxedoMain runs a WSL listener and WSH listeners over a port range until
// ctx ends.
func tuxedoMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("tuxedo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	wsl := fs.String("wsl", "", "WSL address:port to listen on (the fixed port, e.g. 6789)")
	wshRange := fs.String("wsh-range", "", "WSH port range LOW-HIGH, listened on at the WSL's address (e.g. 10000-10499)")
	label := fs.String("label", "S1", "label put in every WSH answer")
	announce := fs.String("announce", "", "address to announce to clients for WSH instead of our own (Tuxedo's -H; e.g. the virtual address)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *wsl == "" || *wshRange == "" {
		return errors.New("tuxedo needs --wsl and --wsh-range")
	}
	wslAddr, err := netip.ParseAddrPort(*wsl)
	if err != nil {
		return fmt.Errorf("--wsl %q: %v", *wsl, err)
	}
	low, high, err := parseRange(*wshRange)
	if err != nil {
		return err
	}
	host := wslAddr.Addr()
	if *announce != "" {
		a, err := parseHost(*announce)
		if err != nil {
			return fmt.Errorf("--announce %q: %v", *announce, err)
		}
		host = a
	}
	log := &lockedWriter{w: stdout}
	var lns []net.Listener
	closeAll := func() {
		for _, ln := range lns {
			ln.Close()
		}
	}
	wln, err := net.Listen("tcp", wslAddr.String())
	if err != nil {
		return err
	}
	lns = append(lns, wln)
	for p := int(low); p <= int(high); p++ {
		ln, err := net.Listen("tcp", netip.AddrPortFrom(wslAddr.Addr(), uint16(p)).String())
		if err != nil {
			closeAll()
			return fmt.Errorf("WSH port %d: %v", p, err)
		}
		lns = append(lns, ln)
	}
	w := &wslServer{label: *label, host: host, low: low, high: high, log: log}
	// One label server answers on every WSH port: set up before serving.
	wsh := &labelServer{label: *label, frame: "line", log: log}
	log.printf("%s WSL listening on %s, WSH on %s:%d-%d, announcing %s\n", *label, wslAddr, wslAddr.Addr(), low, high, host)
	var wg sync.WaitGroup
	errs := make(chan error, len(lns))
	for i, ln := range lns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i == 0 {
				errs <- serveConns(ctx, ln, nil, w.handle)
			} else {
				errs <- wsh.serve(ctx, ln)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func parseRange(s string) (uint16, uint16, error) {
	lo, hi, ok := strings.Cut(s, "-")
	if !ok {
		hi = lo
	}
	l, err1 := strconv.ParseUint(lo, 10, 16)
	h, err2 := strconv.ParseUint(hi, 10, 16)
	if err1 != nil || err2 != nil || l == 0 || l > h {
		return 0, 0, fmt.Errorf("--wsh-range %q: want LOW-HIGH ports, LOW <= HIGH", s)
	}
	if h-l >= 4096 {
		return 0, 0, fmt.Errorf("--wsh-range %q: at most 4096 ports", s)
	}
	return uint16(l), uint16(h), nil
}

// parseHost reads an address, ignoring a port if one is given.
func parseHost(s string) (netip.Addr, error) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr(), nil
	}
	return netip.ParseAddr(s)
}

// wslServer hands each client a WSH port from its range, in turn.
type wslServer struct {
	label     string
	host      netip.Addr
	low, high uint16
	next      atomic.Uint32
	log       *lockedWriter
}

func (w *wslServer) handle(c net.Conn) {
	defer c.Close()
	from := c.RemoteAddr().String()
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if line != "" {
			span := uint32(w.high-w.low) + 1
			port := w.low + uint16((w.next.Add(1)-1)%span)
			answer := fmt.Sprintf("WSH %s\n", netip.AddrPortFrom(w.host, port))
			w.log.printf("%s WSL %q from %s: %s", w.label, strings.TrimRight(line, "\r\n"), from, answer)
			if _, err := io.WriteString(c, answer); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// tuxedoClientMain does the two-connection dance: WSL, then the WSH it was
// told about; it prints what each said.
func tuxedoClientMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("tuxedo-client", flag.ContinueOnError)
	fs.SetOutput(stderr)
	wsl := fs.String("wsl", "", "WSL address:port (usually the WSL virtual server)")
	label := fs.String("label", "C1", "label put in every message")
	count := fs.Int("count", 1, "how many sessions to open, one after the other")
	hold := fs.Bool("hold", false, "keep every WSH connection open until the last session is done (so the servers see concurrent clients)")
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for each answer")
	linger := fs.Duration("linger", 0, "with --hold, keep the WSH connections open this long after the last session (or until interrupted)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *wsl == "" {
		return errors.New("tuxedo-client needs --wsl")
	}
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for i := 0; i < *count; i++ {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		name := *label
		if *count > 1 {
			name = fmt.Sprintf("%s-%d", *label, i+1)
		}
		wsh, err := ask(*wsl, "CONNECT "+name, *timeout, nil)
		if err != nil {
			return fmt.Errorf("WSL %s: %v", *wsl, err)
		}
		fmt.Fprintf(stdout, "%s: WSL %s answered %s\n", name, *wsl, wsh)
		addr, ok := strings.CutPrefix(wsh, "WSH ")
		if !ok {
			return fmt.Errorf("WSL %s: answer %q has no WSH address", *wsl, wsh)
		}
		var keep *net.Conn
		if *hold {
			keep = new(net.Conn)
		}
		answer, err := ask(addr, "CALL "+name, *timeout, keep)
		if err != nil {
			return fmt.Errorf("WSH %s: %v", addr, err)
		}
		if keep != nil {
			held = append(held, *keep)
		}
		fmt.Fprintf(stdout, "%s: WSH %s answered %s\n", name, addr, answer)
	}
	if *hold && *linger > 0 {
		select {
		case <-ctx.Done():
		case <-time.After(*linger):
		}
	}
	return nil
}

// ask connects, sends one line and returns the answer line. With keep, the
// connection is left open and handed back.
func ask(addr, msg string, timeout time.Duration, keep *net.Conn) (string, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return "", err
	}
	c.SetDeadline(time.Now().Add(timeout))
	if _, err := io.WriteString(c, msg+"\n"); err != nil {
		c.Close()
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		c.Close()
		return "", err
	}
	if keep != nil {
		c.SetDeadline(time.Time{})
		*keep = c
	} else {
		c.Close()
	}
	return strings.TrimRight(line, "\r\n"), nil
}
