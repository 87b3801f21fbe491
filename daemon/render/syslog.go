package render

import (
	"io"
	"strconv"

	"github.com/openltm/openltm/dataplane/hsl"
	"github.com/openltm/openltm/dataplane/ipfix"
	"github.com/openltm/openltm/dataplane/syslog"
)

// SyslogStats is where iRule log lines go and what was lost on the way:
// the local file, the remote servers, the lines the log queue dropped, and
// each high-speed logging sender.
type SyslogStats struct {
	File    string
	Dropped uint64
	Remotes []syslog.Remote
	HSL     []hsl.Stats
	// IPFIX are the ipfix destinations' exporters.
	IPFIX []ipfix.Stats
}

// Syslog prints `show sys syslog`, an openltm page: BIG-IP shows no
// statistics for its syslog; openltm shows its log destinations and HSL
// senders so that a dropped log line is never silent.
func Syslog(w io.Writer, st SyslogStats, o Options) error {
	u := func(n uint64) string { return strconv.FormatUint(n, 10) }
	rows := [][2]string{
		{"Local Log File", st.File},
		{"Lines Dropped", u(st.Dropped)},
		{"Remote Servers", ""},
	}
	if len(st.Remotes) == 0 {
		rows = append(rows, [2]string{"none", "N/A"})
	}
	for _, r := range st.Remotes {
		rows = append(rows, [2]string{r.Name, r.Addr.String()})
	}
	if err := statBlock(w, "Sys::Syslog", rows); err != nil {
		return err
	}
	for _, h := range st.HSL {
		title := "Sys::High Speed Logging: " + o.rel(h.Pool) + " (" + h.Proto + ")"
		if h.Distribution != hsl.Balanced {
			title = "Sys::High Speed Logging: " + o.rel(h.Pool) + " (" + h.Proto + ", " + h.Distribution.String() + ")"
		}
		if err := statBlock(w, title, [][2]string{
			{"Messages", ""},
			{"Sent", u(h.Sent)},
			{"Queued", u(h.Queued)},
			{"Dropped (Queue Full)", u(h.DroppedFull)},
			{"Dropped (No Member)", u(h.DroppedNoMember)},
			{"Connections", ""},
			{"Opened", u(h.Connects)},
			{"Failures", u(h.Failures)},
		}); err != nil {
			return err
		}
	}
	for _, x := range st.IPFIX {
		proto := "UDP"
		if x.TCP {
			proto = "TCP"
		}
		if x.TLS {
			proto = "TLS"
		}
		if err := statBlock(w, "Sys::IPFIX: "+o.rel(x.Pool)+" ("+x.Version.String()+", "+proto+")", [][2]string{
			{"Records", ""},
			{"Sent", u(x.Records)},
			{"Dropped", u(x.Dropped)},
			{"Messages", u(x.Messages)},
			{"Templates Sent", u(x.Templates)},
			{"Failures", u(x.Failures)},
		}); err != nil {
			return err
		}
	}
	return nil
}
