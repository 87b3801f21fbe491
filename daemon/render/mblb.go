package render

import (
	"io"
	"strconv"
	"strings"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/mblb"
)

// OneConnectProfile prints one `Ltm::OneConnect Profile` block (show ltm
// profile one-connect).
func OneConnectProfile(w io.Writer, name string, st mblb.OneConnectStats, o Options) error {
	return statBlock(w, "Ltm::OneConnect Profile: "+o.rel(name), [][2]string{
		{"Virtual Server Name", "N/A"},
		{"Connections", ""},
		{"Current Idle", strconv.FormatInt(st.CurrentIdle, 10)},
		{"Maximum", strconv.FormatInt(st.Maximum, 10)},
		{"Total Reuses", strconv.FormatUint(st.TotalReuses, 10)},
		{"New", strconv.FormatUint(st.New, 10)},
	})
}

// MBLBProfile prints one `Ltm::MBLB Profile` block (show ltm profile
// mblb). BIG-IP's mblb profile has no statistics page; openltm shows what
// its engine counts, so that a retry or a reset is never silent.
func MBLBProfile(w io.Writer, name string, st dataplane.MBLBStats, o Options) error {
	u := func(n uint64) string { return strconv.FormatUint(n, 10) }
	return statBlock(w, "Ltm::MBLB Profile: "+o.rel(name), [][2]string{
		{"Virtual Server Name", "N/A"},
		{"Connections", ""},
		{"Current Clients", strconv.Itoa(st.Sessions)},
		{"Current Server", strconv.Itoa(st.ServerConns)},
		{"Server Opened", u(st.ServerConnsOpened)},
		{"Opened Ahead", u(st.SpareConnsOpened)},
		{"Server Drained", u(st.Drained)},
		{"Messages", ""},
		{"Requests", u(st.Messages)},
		{"Responses", u(st.Responses)},
		{"Retries", u(st.Retries)},
		{"Oversize", u(st.Oversize)},
		{"Unsolicited", u(st.Unsolicited)},
		{"Failures", ""},
		{"Server Failures", u(st.ServerFailures)},
		{"Client Resets", u(st.Resets)},
		{"Flow Control", ""},
		{"Queued Requests", strconv.FormatInt(st.FlowQueued, 10)},
		{"Maximum Queued", strconv.FormatInt(st.FlowQueuedPeak, 10)},
		{"Client Pauses", u(st.FlowPauses)},
	})
}

// IIOPProfile prints one `Ltm::IIOP Profile` block (show ltm profile
// iiop): the IIOP virtuals' requests, replies and timeouts [M: BIG-IP's
// iiop profile statistics are not known to openltm; these are its
// engine's counts]; Slow Client Resets are the one-connect clients
// reset for replies unread past their bound (also in Client Resets);
// Lost Requests those answered with COMM_FAILURE, COMPLETED_MAYBE, their
// member's connection having ended under them.
func IIOPProfile(w io.Writer, name string, st dataplane.MBLBStats, o Options) error {
	u := func(n uint64) string { return strconv.FormatUint(n, 10) }
	return statBlock(w, "Ltm::IIOP Profile: "+o.rel(name), [][2]string{
		{"Virtual Server Name", "N/A"},
		{"Connections", ""},
		{"Current Clients", strconv.Itoa(st.Sessions)},
		{"Current Server", strconv.Itoa(st.ServerConns)},
		{"Server Opened", u(st.ServerConnsOpened)},
		{"Messages", ""},
		{"Requests", u(st.Messages)},
		{"Replies", u(st.Responses)},
		{"Timeouts", u(st.IIOPTimeouts)},
		{"Retries", u(st.Retries)},
		{"Oversize", u(st.Oversize)},
		{"Failures", ""},
		{"Server Failures", u(st.ServerFailures)},
		{"Client Resets", u(st.Resets)},
		{"Slow Client Resets", u(st.IIOPSlowResets)},
		{"Lost Requests", u(st.IIOPLost)},
	})
}

// statBlock prints a BIG-IP statistics block: a dashed header and
// label/value lines with the values right-aligned; a line with no value
// is a group title.
func statBlock(w io.Writer, title string, rows [][2]string) error {
	return statBlockWidth(w, title, rows, 23)
}

// statBlockWidth is statBlock with the values ending at column width or
// further right when a row needs it.
func statBlockWidth(w io.Writer, title string, rows [][2]string, width int) error {
	p := &printer{w: w}
	for _, r := range rows {
		if n := len(r[0]) + 3 + len(r[1]); r[1] != "" && r[1] != "N/A" && n > width {
			width = n
		}
	}
	dash := strings.Repeat("-", max(len(title), width))
	p.f("%s\n%s\n%s\n", dash, title, dash)
	for _, r := range rows {
		switch {
		case r[1] == "":
			p.line(r[0])
		case r[1] == "N/A":
			p.f("%s   %s\n", r[0], r[1])
		default:
			p.f("%s%*s\n", r[0], width-len(r[0]), r[1])
		}
	}
	p.f("\n")
	return p.err
}
