package render

import (
	"bufio"
	"fmt"
	"io"
	"net/netip"
	"strings"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/persist"
)

// PersistWriter streams `show ltm persistence persist-records`: the
// header, one line per record as it arrives, and the total on Close, in
// constant memory however many records the table holds.
type PersistWriter struct {
	w   *bufio.Writer
	n   int
	err error
}

// NewPersistWriter starts a listing on w.
func NewPersistWriter(w io.Writer) *PersistWriter {
	bw := bufio.NewWriterSize(w, 32<<10)
	bw.WriteString("Sys::Persistent Connections\n")
	return &PersistWriter{w: bw}
}

// Write prints one record as BIG-IP prints it (reference §3.5): mode, key,
// virtual address:port, member address:port, tmm. It returns the first
// write error, after which the caller should stop the walk.
func (pw *PersistWriter) Write(r *persist.Record) error {
	if pw.err != nil {
		return pw.err
	}
	pw.n++
	_, pw.err = fmt.Fprintf(pw.w, "%s  %s  %s  %s  (tmm: 0)\n", r.Mode, r.Key.String(), persistEnd(r.VirtualAddr), persistEnd(r.Member))
	return pw.err
}

// Close prints the trailer and flushes.
func (pw *PersistWriter) Close() error {
	if pw.err != nil {
		return pw.err
	}
	fmt.Fprintf(pw.w, "Total records returned: %d\n", pw.n)
	return pw.w.Flush()
}

// persistEnd prints an address and port, `any` for a zero port (a virtual
// over port ranges), '.' before the port after an IPv6 address.
func persistEnd(a netip.AddrPort) string {
	if !a.IsValid() {
		return "any:any"
	}
	s := dataplane.JoinPort(a.Addr().String(), a.Port())
	if a.Port() == 0 {
		s = strings.TrimSuffix(s, "0") + "any"
	}
	return s
}
