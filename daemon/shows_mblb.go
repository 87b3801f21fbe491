package daemon

import (
	"context"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

// registerMBLBShows installs the shows of message-based load balancing and
// OneConnect (show ltm profile one-connect, show ltm profile mblb).
func registerMBLBShows(e *Engine, p *dataplane.Plane) {
	e.RegisterShow("show", "ltm profile one-connect", func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
		for _, name := range profileNames(e, profileOneConnect, names) {
			st, _ := p.OneConnectStats(name)
			writeStatBlock(w, "Ltm::OneConnect Profile: "+shortName(s.Folder(), name), [][2]string{
				{"Virtual Server Name", "N/A"},
				{"Connections", ""},
				{"Current Idle", strconv.FormatInt(st.CurrentIdle, 10)},
				{"Maximum", strconv.FormatInt(st.Maximum, 10)},
				{"Total Reuses", strconv.FormatUint(st.TotalReuses, 10)},
				{"New", strconv.FormatUint(st.New, 10)},
			})
		}
		return nil
	})
	// BIG-IP's mblb profile has no statistics page; openltm shows what its
	// engine counts, so that a retry or a reset is never silent.
	e.RegisterShow("show", "ltm profile mblb", func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
		for _, name := range profileNames(e, profileMBLB, names) {
			st, _ := p.MBLBProfileStats(name)
			u := func(n uint64) string { return strconv.FormatUint(n, 10) }
			writeStatBlock(w, "Ltm::MBLB Profile: "+shortName(s.Folder(), name), [][2]string{
				{"Virtual Server Name", "N/A"},
				{"Connections", ""},
				{"Current Clients", strconv.Itoa(st.Sessions)},
				{"Current Server", strconv.Itoa(st.ServerConns)},
				{"Server Opened", u(st.ServerConnsOpened)},
				{"Messages", ""},
				{"Requests", u(st.Messages)},
				{"Responses", u(st.Responses)},
				{"Retries", u(st.Retries)},
				{"Oversize", u(st.Oversize)},
				{"Unsolicited", u(st.Unsolicited)},
				{"Failures", ""},
				{"Server Failures", u(st.ServerFailures)},
				{"Client Resets", u(st.Resets)},
			})
		}
		return nil
	})
}

// profileNames is the profiles a show covers: those named (patterns
// included), or every profile of the kind.
func profileNames(e *Engine, k *objects.Kind, names []string) []string {
	var out []string
	for _, o := range e.Config().Of(k) {
		if len(names) == 0 {
			out = append(out, o.Name)
			continue
		}
		for _, pat := range names {
			if pat == o.Name || globMatch(pat, o.Name) {
				out = append(out, o.Name)
				break
			}
		}
	}
	return out
}

func globMatch(pat, name string) bool {
	if !strings.ContainsAny(pat, "*?[") {
		return false
	}
	ok, _ := path.Match(pat, name)
	return ok
}

// shortName prints a full path relative to the session's folder, as
// BIG-IP's headers do.
func shortName(folder, name string) string {
	if folder != "" && strings.HasPrefix(name, folder+"/") {
		return name[len(folder)+1:]
	}
	return name
}

// writeStatBlock prints a BIG-IP statistics block: a dashed header and
// label/value lines with the values right-aligned; a line with no value
// is a group title.
func writeStatBlock(w io.Writer, title string, rows [][2]string) {
	width := 23
	for _, r := range rows {
		if n := len(r[0]) + 3 + len(r[1]); r[1] != "" && r[1] != "N/A" && n > width {
			width = n
		}
	}
	dash := strings.Repeat("-", max(len(title), width))
	fmt.Fprintf(w, "%s\n%s\n%s\n", dash, title, dash)
	for _, r := range rows {
		switch {
		case r[1] == "":
			fmt.Fprintln(w, r[0])
		case r[1] == "N/A":
			fmt.Fprintf(w, "%s   %s\n", r[0], r[1])
		default:
			fmt.Fprintf(w, "%s%*s\n", r[0], width-len(r[0]), r[1])
		}
	}
	fmt.Fprintln(w)
}
