package render

import (
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/openltm/openltm/dataplane/ilx"
)

// ILXPlugin is show ilx plugin: the plugin's state, then each
// extension's processes, restarts and calls [M: after the layout of
// BIG-IP's Ilx::Plugin block; openltm counts what its processes do and
// shows no CPU or memory figures].
func ILXPlugin(w io.Writer, name string, disabled bool, exts []ilx.ExtStats, o Options) error {
	state := "enabled"
	if disabled {
		state = "disabled"
	}
	n := func(v int64) string { return o.num(uint64(max(v, 0))) }
	rows := [][2]string{{"State", state}}
	for _, x := range exts {
		pids := make([]string, len(x.PIDs))
		for i, p := range x.PIDs {
			pids[i] = strconv.Itoa(p)
		}
		mode := string(x.Mode)
		if mode == "" {
			mode = "-"
		}
		procs := strconv.Itoa(len(x.PIDs))
		if len(pids) > 0 {
			procs += " (" + strings.Join(pids, " ") + ")"
		}
		rows = append(rows,
			[2]string{"Extension: " + x.Name, ""},
			[2]string{"  Status", x.Status},
			[2]string{"  Concurrency Mode", mode},
			[2]string{"  Processes", procs},
			[2]string{"  Restarts", n(x.Restarts)},
			[2]string{"  Failures", n(x.Failures)},
			[2]string{"  Streamed Flows", n(x.Flows)},
			[2]string{"  RPC Info", ""},
			[2]string{"    Total", n(x.Calls)},
			[2]string{"    Notifies", n(x.Notifies)},
			[2]string{"    Timeouts", n(x.Timeouts)},
			[2]string{"    Errors", n(x.Errors)},
			[2]string{"    Octets In", n(x.OctetsIn)},
			[2]string{"    Octets Out", n(x.OctetsOut)},
			[2]string{"    Average Latency", latency(x.AvgLatency)},
			[2]string{"    Max Latency", latency(x.MaxLatency)},
		)
	}
	return statBlockWidth(w, "Ilx::Plugin: "+o.rel(name), rows, 40)
}

// latency is a round trip in milliseconds with a decimal, as "0.4ms".
func latency(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 1, 64) + "ms"
}
