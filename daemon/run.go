package daemon

import (
	"context"
	"fmt"
	"net"

	"github.com/openltm/openltm/control"
	"github.com/openltm/openltm/dataplane"
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

	stopGSLB func()

	ln     net.Listener
	cancel context.CancelFunc
	done   chan error
}

// Start opens the engine in opts.StateDir, brings the dataplane up to the
// running configuration and serves the control socket. It returns once the
// socket accepts connections. control.ErrInUse means another daemon owns
// the socket.
func Start(opts Options, socket string) (*Running, error) {
	ln, err := control.Listen(socket)
	if err != nil {
		return nil, err
	}
	e, err := Open(opts)
	if err != nil {
		ln.Close()
		return nil, err
	}
	p := dataplane.New(dataplane.Options{Logger: e.Logger()})
	if err := e.AttachDataplane(p); err != nil {
		// The stored configuration cannot run (an address is taken): keep
		// serving so the user can fix it, and say why.
		e.Logger().Error("the stored configuration could not be applied", "err", err)
	}
	g := gslb.New(gslb.Options{Logger: e.Logger()})
	stopGSLB, err := e.AttachGSLB(g, p)
	if err != nil {
		e.Logger().Error("the GSLB could not be started", "err", err)
		stopGSLB = func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Running{Engine: e, Plane: p, GSLB: g, Socket: socket, stopGSLB: stopGSLB, ln: ln, cancel: cancel, done: make(chan error, 1)}
	go func() {
		r.done <- control.Serve(ctx, ln, e, e.Logger())
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

// Stop closes the socket, ends every session, stops the GSLB and the
// dataplane and closes the store.
func (r *Running) Stop() error {
	r.cancel()
	err := <-r.done
	r.done <- err // let a concurrent Wait return too
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
