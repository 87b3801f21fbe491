package daemon

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"time"

	"github.com/openltm/openltm/control"
	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/dnsexpress"
	"github.com/openltm/openltm/dataplane/gslb"
)

// Running is a whole ltmd: engine, dataplane, GSLB DNS server and control
// socket. cmd/ltmd
// runs one in the foreground; tmsh starts one embedded when no daemon
// answers; transcripts start them in their work directories.
type Running struct {
	Engine *Engine
	Plane  *dataplane.Plane
	// GSLB serves DNS for the gtm objects (no listener, no socket).
	GSLB   *gslb.Server
	Socket string

	stopGSLB   func()
	stopXpress func() // DNS Express
	stopIQuery func()
	// stopCluster and stopMetrics end the device group membership and
	// the metrics endpoint (no-ops when not configured).
	stopCluster, stopMetrics func()

	ln     net.Listener
	srv    *control.Server
	cancel context.CancelFunc
	done   chan error
}

// Start opens the engine in opts.StateDir, brings the dataplane up to the
// running configuration and serves the control socket. It returns once the
// socket accepts connections, which it does only from then on. control.ErrInUse means another daemon owns
// the socket.
func Start(opts Options, socket string) (*Running, error) {
	// The path is claimed first; the socket appears only once the stored
	// configuration runs, so whoever waits for it finds the virtuals up.
	res, err := control.Reserve(socket)
	if err != nil {
		return nil, err
	}
	e, err := Open(opts)
	if err != nil {
		res.Release()
		return nil, err
	}
	if opts.Cluster != nil {
		e.standbyUntilJoined(*opts.Cluster)
	}
	p := dataplane.New(dataplane.Options{Logger: e.Logger(), BusyPoll: opts.BusyPoll})
	if err := e.AttachDataplane(p); err != nil {
		// The stored configuration cannot run (an address is taken): keep
		// serving so the user can fix it, and say why.
		e.Logger().Error("the stored configuration could not be applied", "err", err)
	}
	g := gslb.New(gslb.Options{Logger: e.GTMLogger()}) // sys db log.gtm.level
	stopGSLB, err := e.AttachGSLB(g, p)
	if err != nil {
		e.Logger().Error("the GSLB could not be started", "err", err)
		stopGSLB = func() {}
	}
	// DNS Express: its zones' copies are kept in the state dir, so that a
	// restart answers at once.
	x := dnsexpress.New(dnsexpress.Options{Logger: e.Logger(), Dir: filepath.Join(opts.StateDir, "dnsexpress")})
	stopExpress, err := e.AttachDNSExpress(x, g, p)
	if err != nil {
		e.Logger().Error("DNS Express could not be started", "err", err)
		stopExpress = func() {}
	}
	// iQuery: this ltmd's virtual servers to the GSLBs that trust it, and
	// the datacenters' to this one's GSLB (its identity in the state dir).
	stopIQuery, err := e.AttachIQuery(g, p, filepath.Join(opts.StateDir, "iquery"))
	if err != nil {
		e.Logger().Error("iQuery could not be started", "err", err)
		stopIQuery = func() {}
	}
	stopAll := func() {
		stopIQuery()
		stopExpress()
		stopGSLB()
		g.Close()
		p.Close()
		e.Close()
		res.Release()
	}
	stopCluster, stopMetrics := func() {}, func() {}
	if opts.Cluster != nil {
		if stopCluster, err = e.AttachCluster(*opts.Cluster); err != nil {
			stopAll()
			return nil, err
		}
	}
	if opts.MetricsAddress != "" {
		if stopMetrics, err = e.ServeMetrics(opts.MetricsAddress, p, g); err != nil {
			stopCluster()
			stopAll()
			return nil, fmt.Errorf("metrics address %s: %w", opts.MetricsAddress, err)
		}
	}
	ln, err := res.Listen()
	if err != nil {
		stopMetrics()
		stopCluster()
		stopAll()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv := &control.Server{Backend: e, Logger: e.Logger()}
	r := &Running{Engine: e, Plane: p, GSLB: g, Socket: socket, stopGSLB: stopGSLB, stopXpress: stopExpress, stopIQuery: stopIQuery, stopCluster: stopCluster, stopMetrics: stopMetrics,
		ln: ln, srv: srv, cancel: cancel, done: make(chan error, 1)}
	go func() {
		r.done <- srv.Serve(ctx, ln)
	}()
	e.Logger().Info("ltmd ready", "socket", socket, "state", opts.StateDir, "generation", e.Generation())
	return r, nil
}

// Wait blocks until the control server stops; it may be called along with
// Stop, and more than once.
func (r *Running) Wait() error {
	err := <-r.done
	r.done <- err
	return err
}

// Sessions is the number of shells connected now.
func (r *Running) Sessions() int { return r.srv.Active() }

// StopWhenIdle stops once no shell is connected (or after max), so a tmsh
// that started an embedded daemon does not cut off other shells that
// joined it: waiting is called once, with their number, if it must wait.
func (r *Running) StopWhenIdle(max time.Duration, waiting func(n int)) error {
	start := time.Now()
	deadline := start.Add(max)
	told := false
	for n := r.Sessions(); n > 0 && time.Now().Before(deadline); n = r.Sessions() {
		// The caller's own connection may take a moment to be seen closed:
		// only a session still there after a grace period is another shell.
		if !told && waiting != nil && time.Since(start) > 500*time.Millisecond {
			waiting(n)
			told = true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return r.Stop()
}

// Stop closes the socket, ends every session, stops the GSLB and the
// dataplane and closes the store.
func (r *Running) Stop() error {
	r.cancel()
	err := <-r.done
	r.done <- err // let a concurrent Wait return too
	r.stopMetrics()
	r.stopCluster()
	r.stopIQuery()
	r.stopXpress()
	r.stopGSLB()
	r.GSLB.Close()
	r.Plane.Close()
	if cerr := r.Engine.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("stopping ltmd: %w", err)
	}
	return nil
}

// Serve runs a daemon in the foreground until ctx ends (SIGINT or SIGTERM
// in ltmd) or its control socket stops serving, logging as ltmd does. It
// is ltmd's main loop, shared by cmd/ltmd and the background daemon tmsh
// starts. control.ErrInUse means another daemon owns the socket.
func Serve(ctx context.Context, opts Options, socket string) error {
	r, err := Start(opts, socket)
	if err != nil {
		return err
	}
	log := r.Engine.Logger()
	served := make(chan error, 1)
	go func() { served <- r.Wait() }()
	select {
	case <-ctx.Done():
	case err := <-served:
		// The control server stopped by itself: say so, and stop.
		log.Error("the control socket stopped serving", "err", err)
	}
	log.Info("stopping")
	if err := r.Stop(); err != nil {
		return err
	}
	log.Info("stopped")
	return nil
}
