package daemon

import (
	"context"
	"io"
	"net/netip"
	"path/filepath"
	"strconv"

	"github.com/openltm/openltm/daemon/render"
	"github.com/openltm/openltm/dataplane/syslog"
	"github.com/openltm/openltm/objects"
)

// sys syslog: the remote servers iRule log lines are sent to, besides
// the local file.
var (
	sysSyslog        = schema.MustKind("sys syslog")
	syslogRemotes    = sysSyslog.MustProp("remote-servers")
	syslogRemoteHost = syslogRemotes.Sub.MustProp("host")
	syslogRemotePort = syslogRemotes.Sub.MustProp("remote-port")
	syslogISODate    = sysSyslog.MustProp("iso-date")
)

// LogFile is where ltmd writes iRule log lines (log, and TCL errors), in
// BIG-IP's /var/log/ltm format, under its state directory.
const LogFile = "log/ltm"

// openLogs starts the engine's log destination: STATE-DIR/log/ltm.
func (e *Engine) openLogs() error {
	d, err := syslog.Open(syslog.Options{File: filepath.Join(e.opts.StateDir, LogFile), Hostname: e.Hostname, Logger: e.log})
	if err != nil {
		return err
	}
	e.logs = d
	e.rules.rt.dest = d
	e.RegisterRuntime(syslogCommands(e))
	return nil
}

// remoteServers reads sys syslog's remote servers. A host that is not an
// IP address is refused (openltm resolves no names for syslog), unless
// keep says the server was already there: a stored configuration is
// brought up whatever it holds, with the server left out.
func remoteServers(cfg *objects.Config, keep func(name, host string) bool) ([]syslog.Remote, []error, error) {
	o := cfg.Get(sysSyslog, "")
	if o == nil {
		return nil, nil, nil
	}
	var out []syslog.Remote
	var skipped []error
	if v := syslogRemotes.Get(o); v != nil {
		for _, it := range v.Items {
			host := syslogRemoteHost.StrIn(it)
			var err error
			a, perr := netip.ParseAddr(host)
			port := uint64(514)
			if perr != nil {
				err = objects.Invalid("sys syslog remote-servers %s: host %q must be an IP address", it.Name, host)
			} else if p := syslogRemotePort.StrIn(it); p != "" {
				if port, perr = strconv.ParseUint(p, 10, 16); perr != nil || port == 0 {
					err = objects.Invalid("sys syslog remote-servers %s: remote-port %q must be 1 to 65535", it.Name, p)
				}
			}
			if err != nil {
				if keep(it.Name, host) {
					skipped = append(skipped, err)
					continue
				}
				return nil, nil, err
			}
			out = append(out, syslog.Remote{Name: it.Name, Addr: netip.AddrPortFrom(a, uint16(port))})
		}
	}
	return out, skipped, nil
}

// syslogHook keeps the log destination's remote servers those of the
// running configuration.
type syslogHook struct{ e *Engine }

// Prepare implements Hook.
func (h syslogHook) Prepare(old, cfg *objects.Config, opts CommitOptions) (Change, error) {
	keep := func(name, host string) bool {
		if old == nil {
			return opts.Lenient
		}
		if o := old.Get(sysSyslog, ""); o != nil {
			if v := syslogRemotes.Get(o); v != nil {
				for _, it := range v.Items {
					if it.Name == name && syslogRemoteHost.StrIn(it) == host {
						return true
					}
				}
			}
		}
		return false
	}
	rs, skipped, err := remoteServers(cfg, keep)
	if err != nil {
		return nil, err
	}
	for _, e := range skipped {
		h.e.log.Warn("sys syslog remote server not used", "err", e)
	}
	iso := false
	if o := cfg.Get(sysSyslog, ""); o != nil {
		iso = syslogISODate.Str(o) == "enabled"
	}
	return &syslogChange{d: h.e.logs, want: rs, iso: iso}, nil
}

// syslogChange is a new set of remote servers and the file's date format
// (iso-date).
type syslogChange struct {
	d            *syslog.Dest
	want, prev   []syslog.Remote
	iso, prevISO bool
	done         bool
}

// Commit implements Change.
func (c *syslogChange) Commit() error {
	if c.d == nil {
		return nil
	}
	c.prev, c.prevISO, c.done = c.d.Remotes(), c.d.ISODate(), true
	c.d.SetRemotes(c.want)
	c.d.SetISODate(c.iso)
	return nil
}

// Abort implements Change.
func (c *syslogChange) Abort() {
	if c.done {
		c.d.SetRemotes(c.prev)
		c.d.SetISODate(c.prevISO)
	}
}

// syslogCommands answers show sys syslog: the log file, the remote
// servers, and what the log queue and the HSL senders dropped.
func syslogCommands(e *Engine) []RuntimeCommand {
	return []RuntimeCommand{{"show", "sys syslog", func(ctx context.Context, s *Session, _, _ []string, w io.Writer) error {
		st := render.SyslogStats{File: filepath.Join(e.opts.StateDir, LogFile), HSL: e.HSLStats(), IPFIX: e.IPFIXStats()}
		if e.logs != nil {
			st.Dropped, st.Remotes = e.logs.Dropped(), e.logs.Remotes()
		}
		return render.Syslog(w, st, render.Options{Folder: s.Folder()})
	}}}
}
