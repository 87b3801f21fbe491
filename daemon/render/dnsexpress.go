package render

import (
	"io"
	"strconv"
	"time"

	"github.com/openltm/openltm/dataplane/dnsexpress"
)

// DNSZone prints one `Ltm::DNS Zone` block of show ltm dns zone: what an
// operator checks after a change on the primary, whether the copy is
// current (its serial), whole (its records) and how the last transfer
// went [M: BIG-IP's layout and field names].
func DNSZone(w io.Writer, st dnsexpress.ZoneStats, o Options) error {
	status := "no copy"
	if st.Loaded {
		status = "loaded"
	}
	at := func(t time.Time) string {
		if t.IsZero() {
			return "never"
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	result := st.LastResult
	if result == "" {
		result = "none"
	}
	return statBlock(w, "Ltm::DNS Zone: "+o.rel(st.Name), [][2]string{
		{"DNS Express", ""},
		{"Status", status},
		{"SOA Serial", strconv.FormatUint(uint64(st.Serial), 10)},
		{"Records", o.num(uint64(st.Records))},
		{"Zone Transfers", ""},
		{"Last Result", result},
		{"Last Attempt", at(st.LastTransfer)},
		{"Last Success", at(st.LastSuccess)},
		{"Transfers", o.num(st.Transfers)},
		{"Failures", o.num(st.Failures)},
		{"NOTIFY", ""},
		{"Accepted", o.num(st.Notifies)},
		{"Rejected", o.num(st.NotifyRejected)},
		{"Transfers to Clients", ""},
		{"Answered", o.num(st.TransfersOut)},
		{"Refused", o.num(st.TransfersOutRefused)},
		{"NOTIFY Sent", o.num(st.NotifiesSent)},
	})
}
