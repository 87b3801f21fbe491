package render

import (
	"bufio"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
	"time"

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
	// all prints a block of every field per record (all-properties),
	// ages counted at now, names relative to o's folder.
	all bool
	now time.Time
	o   Options
}

// NewPersistWriter starts a listing on w.
func NewPersistWriter(w io.Writer) *PersistWriter {
	bw := bufio.NewWriterSize(w, 32<<10)
	bw.WriteString("Sys::Persistent Connections\n")
	return &PersistWriter{w: bw}
}

// NewPersistWriterAll starts an all-properties listing on w: a block per
// record with its mode, key, age, virtual server, pool and client, as
// BIG-IP prints them.
func NewPersistWriterAll(w io.Writer, now time.Time, folder string) *PersistWriter {
	pw := NewPersistWriter(w)
	pw.all, pw.now, pw.o = true, now, Options{Folder: folder}
	return pw
}

// Write prints one record as BIG-IP prints it (reference §3.5): mode, key,
// virtual address:port, member address:port, tmm. It returns the first
// write error, after which the caller should stop the walk.
func (pw *PersistWriter) Write(r *persist.Record) error {
	if pw.err != nil {
		return pw.err
	}
	pw.n++
	if !pw.all {
		_, pw.err = fmt.Fprintf(pw.w, "%s  %s  %s  %s  (tmm: 0)\n", r.Mode, r.Key.String(), persistEnd(r.VirtualAddr), persistEnd(r.Member))
		return pw.err
	}
	age := "-"
	if !r.Used.IsZero() {
		age = strconv.FormatInt(int64(max(pw.now.Sub(r.Used), 0)/time.Second), 10)
	}
	client := "-"
	if r.Client.IsValid() {
		client = r.Client.String()
	}
	_, pw.err = fmt.Fprintf(pw.w, "%s - %s - %s\n", r.Mode, persistEnd(r.VirtualAddr), persistEnd(r.Member))
	for _, kv := range [][2]string{
		{"TMM", "0"}, {"Mode", r.Mode.String()}, {"Key", r.Key.String()}, {"Age (sec.)", age},
		{"Virtual Name", pw.o.rel(r.Virtual)}, {"Virtual Addr", persistEnd(r.VirtualAddr)}, {"Node Addr", persistEnd(r.Member)},
		{"Pool Name", pw.o.rel(r.Pool)}, {"Client Addr", client},
	} {
		if pw.err == nil {
			_, pw.err = fmt.Fprintf(pw.w, "  %-14s%s\n", kv[0], kv[1])
		}
	}
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
