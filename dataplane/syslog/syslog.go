// Package syslog is where iRule log lines go, as BIG-IP's syslog takes
// them: a local file in BIG-IP's format (ltmd writes /var/log/ltm's
// equivalent, STATE-DIR/log/ltm), and, when `sys syslog remote-servers`
// are configured, RFC 5424 messages over UDP to each of them. Logging
// never blocks the connection that runs the rule: lines go through a
// bounded queue to one writer, and lines that do not fit are counted and
// reported. Identical lines repeated back to back are written once, then
// "last message repeated N times", as syslog does. `sys syslog iso-date`
// switches the file's dates to ISO 8601 (SetISODate).
package syslog

import (
	"bufio"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Remote is one remote syslog server.
type Remote struct {
	Name string
	Addr netip.AddrPort
}

// Options configure a Dest.
type Options struct {
	// File is the local log file ("" writes none); its directory is made.
	File string
	// Hostname names this system in every line.
	Hostname func() string
	// Logger receives the destination's own failures.
	Logger *slog.Logger
	// Queue bounds the lines waiting for the writer (0: 8192).
	Queue int
	// Repeat is how long identical lines are folded into one "last
	// message repeated" line (0: 30s, as syslog-ng's default).
	Repeat time.Duration
	// Now is the clock (tests); nil: time.Now.
	Now func() time.Time
	// MaxSize is the file's size at which it is rotated: renamed to
	// FILE.1 (replacing the one before) and started anew, as BIG-IP's
	// logrotate keeps /var/log/ltm bounded (0: 64 MiB).
	MaxSize int64
}

// entry is one line on its way to the writer; to is its own destination
// (`log ADDR ...`), else the file and every remote server.
type entry struct {
	at       time.Time
	pri      int
	severity string
	line     string
	to       netip.AddrPort
	flush    chan struct{}
}

// Dest is the running log destination.
type Dest struct {
	opts    Options
	q       chan entry
	remotes atomic.Pointer[[]Remote]
	isoDate atomic.Bool
	dropped atomic.Uint64
	done    chan struct{}
	wg      sync.WaitGroup
	pid     string
}

// Open starts a destination writing to o.File.
func Open(o Options) (*Dest, error) {
	if o.Queue <= 0 {
		o.Queue = 8192
	}
	if o.Repeat <= 0 {
		o.Repeat = 30 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.MaxSize <= 0 {
		o.MaxSize = 64 << 20
	}
	if o.Hostname == nil {
		o.Hostname = func() string { h, _ := os.Hostname(); return h }
	}
	var f *logFile
	if o.File != "" {
		if err := os.MkdirAll(filepath.Dir(o.File), 0o755); err != nil {
			return nil, err
		}
		f = &logFile{path: o.File, max: o.MaxSize}
		if err := f.open(); err != nil {
			return nil, err
		}
	}
	d := &Dest{opts: o, q: make(chan entry, o.Queue), done: make(chan struct{}), pid: strconv.Itoa(os.Getpid())}
	d.remotes.Store(&[]Remote{})
	d.wg.Add(1)
	go d.run(f)
	return d, nil
}

// SetRemotes replaces the remote servers every line is also sent to.
func (d *Dest) SetRemotes(rs []Remote) { d.remotes.Store(&rs) }

// SetISODate switches the file's timestamps between BIG-IP's default
// ("Dec  1 12:00:00") and ISO 8601 with the zone ("2026-12-01T12:00:00+00:00"),
// as `sys syslog iso-date enabled` makes syslog-ng write them: log
// collectors that sort by date or span a new year need the year and zone.
func (d *Dest) SetISODate(on bool) { d.isoDate.Store(on) }

// ISODate reports whether the file's timestamps are ISO 8601.
func (d *Dest) ISODate() bool { return d.isoDate.Load() }

// Remotes returns the remote servers in use.
func (d *Dest) Remotes() []Remote { return *d.remotes.Load() }

// Log queues a line for the file and the remote servers; facility is
// facility.severity (local0.info, local0.err, ...).
func (d *Dest) Log(facility, line string) { d.put(facility, line, netip.AddrPort{}) }

// LogTo queues a line for one syslog server only, as `log ADDR
// facility.level text` asks.
func (d *Dest) LogTo(to netip.AddrPort, facility, line string) { d.put(facility, line, to) }

func (d *Dest) put(facility, line string, to netip.AddrPort) {
	pri, sev := Priority(facility)
	select {
	case d.q <- entry{at: d.opts.Now(), pri: pri, severity: sev, line: line, to: to}:
	default:
		d.dropped.Add(1)
	}
}

// Dropped is the number of lines the queue could not take.
func (d *Dest) Dropped() uint64 { return d.dropped.Load() }

// Sync waits until every line queued before it is written (tests, and
// before a stop).
func (d *Dest) Sync() {
	ch := make(chan struct{})
	select {
	case d.q <- entry{flush: ch}:
		<-ch
	case <-d.done:
	}
}

// Close writes what is queued and stops.
func (d *Dest) Close() {
	select {
	case <-d.done:
		return
	default:
	}
	d.Sync()
	close(d.done)
	d.wg.Wait()
}

// FacilityWords are syslog's facility names by code (RFC 5424 table 1),
// as rules' `log local0.` and log destinations' default-facility write
// them.
var FacilityWords = [...]string{"kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news",
	"uucp", "cron", "authpriv", "ftp", "ntp", "audit", "alert", "clock",
	"local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7"}

// SeverityWords are the words BIG-IP's log files print for each severity
// (RFC 5424 table 2).
var SeverityWords = [...]string{"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"}

// severityAliases are the other spellings syslog(3) users write.
var severityAliases = map[string]int{"panic": 0, "error": 3, "warn": 4}

// Facility is the code of a facility name (any case).
func Facility(name string) (int, bool) {
	for i, w := range FacilityWords {
		if strings.EqualFold(w, name) {
			return i, true
		}
	}
	return 0, false
}

// Severity is the code of a severity name (any case, with syslog(3)'s
// aliases).
func Severity(name string) (int, bool) {
	for i, w := range SeverityWords {
		if strings.EqualFold(w, name) {
			return i, true
		}
	}
	s, ok := severityAliases[strings.ToLower(name)]
	return s, ok
}

// Name is facility.severity for a PRI (134 is local0.info; out of range
// reads as 134), as the local log takes it.
func Name(pri int) string {
	if pri < 0 || pri > 191 {
		pri = 134
	}
	return FacilityWords[pri>>3] + "." + SeverityWords[pri&7]
}

// Priority is the syslog PRI of facility.severity (local0.info is 134)
// and the severity's word; unknown parts read as local0 and info.
func Priority(facility string) (int, string) {
	fac, sev, _ := strings.Cut(facility, ".")
	f, ok := Facility(fac)
	if !ok {
		f = 16
	}
	s, ok := Severity(sev)
	if !ok {
		s = 6
	}
	return f*8 + s, SeverityWords[s]
}

// run is the one writer: the file, the remote servers, the folding of
// repeated lines and the drop reports.
func (d *Dest) run(f *logFile) {
	defer d.wg.Done()
	var w *bufio.Writer
	if f != nil {
		defer f.close()
		w = bufio.NewWriter(f)
	}
	conns := map[netip.AddrPort]*net.UDPConn{}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	var last entry
	repeats := 0
	var lastReported uint64
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	emit := func(e entry) {
		host := d.opts.Hostname()
		if w != nil {
			// BIG-IP's /var/log/ltm: "Dec  1 12:00:00 bigip1 info tmm[1234]: text".
			// With iso-date: "2026-12-01T12:00:00+00:00 bigip1 info ...".
			stamp := time.Stamp
			if d.isoDate.Load() {
				stamp = "2006-01-02T15:04:05-07:00"
			}
			fmt.Fprintf(w, "%s %s %s tmm[%s]: %s\n", e.at.Format(stamp), host, e.severity, d.pid, e.line)
			if f.size+int64(w.Buffered()) >= f.max {
				w.Flush()
				if err := f.rotate(); err != nil {
					d.opts.Logger.Warn("log file not rotated", "file", f.path, "err", err)
				}
			}
		}
		for _, r := range *d.remotes.Load() {
			d.send(conns, r.Addr, e, host)
		}
	}
	flushRepeats := func() {
		if repeats > 0 {
			e := last
			e.at = d.opts.Now()
			e.line = fmt.Sprintf("last message repeated %d times", repeats)
			emit(e)
			repeats = 0
		}
	}
	for {
		select {
		case <-d.done:
			flushRepeats()
			if w != nil {
				w.Flush()
			}
			return
		case <-tick.C:
			if repeats > 0 && d.opts.Now().Sub(last.at) >= d.opts.Repeat {
				flushRepeats()
			}
			if n := d.dropped.Load(); n != lastReported {
				d.opts.Logger.Warn("log lines dropped (the log queue was full)", "dropped", n-lastReported)
				lastReported = n
			}
			if w != nil {
				w.Flush()
			}
		case e := <-d.q:
			if e.flush != nil {
				if w != nil {
					w.Flush()
				}
				close(e.flush)
				continue
			}
			if e.to.IsValid() {
				d.send(conns, e.to, e, d.opts.Hostname())
				continue
			}
			if e.line == last.line && e.pri == last.pri && e.at.Sub(last.at) < d.opts.Repeat {
				repeats++
				continue
			}
			flushRepeats()
			emit(e)
			last = e
			if len(d.q) == 0 && w != nil {
				w.Flush()
			}
		}
	}
}

// send writes e to a syslog server as RFC 5424 (<PRI>1 TIMESTAMP HOST
// APP PROCID MSGID SD MSG), through the header writer log publishers use.
func (d *Dest) send(conns map[netip.AddrPort]*net.UDPConn, to netip.AddrPort, e entry, host string) {
	c := conns[to]
	if c == nil {
		var err error
		if c, err = net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(to)); err != nil {
			d.opts.Logger.Warn("syslog server unreachable", "server", to.String(), "err", err)
			return
		}
		conns[to] = c
	}
	h := Header{Format: RFC5424, Facility: e.pri >> 3, Severity: e.pri & 7, Hostname: host, App: "tmm", ProcID: d.pid}
	msg := h.Append(make([]byte, 0, len(e.line)+80), e.at, []byte(e.line))
	if _, err := c.Write(msg); err != nil {
		// A server that is not listening answers with ICMP: try a fresh
		// socket next time.
		c.Close()
		delete(conns, to)
	}
}

// logFile is the local log file, rotated at a size.
type logFile struct {
	path string
	max  int64
	f    *os.File
	size int64
}

func (l *logFile) open() error {
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	l.f, l.size = f, st.Size()
	return nil
}

// Write implements io.Writer for the buffered writer in front of it.
func (l *logFile) Write(p []byte) (int, error) {
	if l.f == nil {
		return len(p), nil // a failed rotation: lines are lost until the next
	}
	n, err := l.f.Write(p)
	l.size += int64(n)
	return n, err
}

// rotate renames the file to FILE.1 and opens a new one.
func (l *logFile) rotate() error {
	l.close()
	if err := os.Rename(l.path, l.path+".1"); err != nil {
		l.open()
		return err
	}
	return l.open()
}

func (l *logFile) close() {
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
}
