// Package ocsptest serves OpenSSL's OCSP responder over HTTP on an address
// of the caller's choice, for tests of OCSP stapling and member checks.
// `openssl ocsp -port` listens on every address of the host; here the
// listening is done in Go on the given (loopback) address and each request
// is answered by `openssl ocsp -reqin ... -respout ...` reading the
// responder's index, so the answers are OpenSSL's own.
package ocsptest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Responder is a running OCSP responder.
type Responder struct {
	// Index, CA, Signer and SignerKey are the files openssl ocsp reads:
	// its -index (OpenSSL's CA database: V or R lines), -CA, -rsigner and
	// -rkey. Minutes is -nmin (the answers' next-update); 0: none.
	Index, CA, Signer, SignerKey string
	Minutes                      int
	// Hold keeps each request this long before answering it: a slow
	// responder, whose concurrent requests MaxInFlight shows.
	Hold time.Duration

	ln       net.Listener
	srv      *http.Server
	dir      string
	mu       sync.Mutex // one openssl at a time, as openssl ocsp serves
	requests atomic.Int64
	inFlight atomic.Int64
	maxIn    atomic.Int64
	last     atomic.Pointer[[]byte]
}

// LastRequest is the last request's DER as the responder received it.
func (r *Responder) LastRequest() []byte {
	if b := r.last.Load(); b != nil {
		return *b
	}
	return nil
}

// MaxInFlight is the most requests the responder held at once.
func (r *Responder) MaxInFlight() int64 { return r.maxIn.Load() }

// Available reports why the responder cannot run, or nil.
func Available() error {
	if _, err := exec.LookPath("openssl"); err != nil {
		return errors.New("openssl is not installed")
	}
	return nil
}

// Start listens on addr (host:port) and answers until Close.
func (r *Responder) Start(addr string) error {
	if err := Available(); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "ocsptest")
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		os.RemoveAll(dir)
		return err
	}
	r.ln, r.dir = ln, dir
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: 5 * time.Second}
	go r.srv.Serve(ln)
	return nil
}

// Addr is where the responder listens.
func (r *Responder) Addr() string { return r.ln.Addr().String() }

// URL is the responder's address as a certificate or a validator names it.
func (r *Responder) URL() string { return "http://" + r.Addr() }

// Requests is how many requests the responder answered.
func (r *Responder) Requests() int64 { return r.requests.Load() }

// Close stops the responder; its address refuses connections after.
func (r *Responder) Close() {
	if r.srv != nil {
		r.srv.Close()
	}
	os.RemoveAll(r.dir)
}

func (r *Responder) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		http.Error(w, "POST an OCSP request", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, 64<<10))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.last.Store(&body)
	n := r.inFlight.Add(1)
	defer r.inFlight.Add(-1)
	for m := r.maxIn.Load(); n > m && !r.maxIn.CompareAndSwap(m, n); m = r.maxIn.Load() {
	}
	if r.Hold > 0 {
		time.Sleep(r.Hold)
	}
	der, err := r.answer(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	r.requests.Add(1)
	w.Header().Set("Content-Type", "application/ocsp-response")
	w.Write(der)
}

// answer runs openssl ocsp on one request.
func (r *Responder) answer(reqDER []byte) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	in, out := filepath.Join(r.dir, "req.der"), filepath.Join(r.dir, "resp.der")
	os.Remove(out)
	if err := os.WriteFile(in, reqDER, 0o600); err != nil {
		return nil, err
	}
	args := []string{"ocsp", "-index", r.Index, "-CA", r.CA, "-rsigner", r.Signer, "-rkey", r.SignerKey,
		"-reqin", in, "-respout", out}
	if r.Minutes > 0 {
		args = append(args, "-nmin", strconv.Itoa(r.Minutes))
	}
	cmd := exec.Command("openssl", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return nil, fmt.Errorf("openssl ocsp: %v: %s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
		return nil, errors.New("openssl ocsp took more than 10s")
	}
	return os.ReadFile(out)
}
