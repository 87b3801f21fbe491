package fix

import (
	"fmt"
	"strings"
	"sync/atomic"
)

// Options is a virtual's fix profile as the L4 engine applies it.
type Options struct {
	// Profile is the profile's full name, for logs.
	Profile string
	// DropConnection is error-action drop-connection: a malformed
	// message resets the connection; otherwise (dont-forward) it is
	// dropped and the connection goes on, unless its framing is lost.
	DropConnection bool
	// FullLogon is full-logon-parsing: the client's first message must
	// be a Logon (35=A).
	FullLogon bool
	// Quick is quick-parsing: the checksum's value is not checked.
	Quick bool
	// Response is response-parsing: the member's messages are checked
	// as the client's are (they are always framed, and mapped back).
	Response bool
	// SenderTags maps a SenderCompID to the tag numbers its messages'
	// tags become toward the member (sender-tag-class).
	SenderTags map[string]map[int]int
	// Max bounds a message's BodyLength; 0: DefaultMax.
	Max int
	// Log is the profile's log publishers; nil: none.
	Log *Log
}

// Counts are a virtual's FIX messages, for show ltm profile fix.
type Counts struct {
	// FromClient and FromServer count the messages read from each end;
	// Malformed those refused (dropped or reset), Mapped those whose
	// tags were renumbered.
	FromClient, FromServer, Malformed, Mapped atomic.Uint64
	// reported is when the last status report went to
	// report-log-publisher (Unix nanoseconds; 0: none yet).
	reported atomic.Int64
}

// Reset zeroes the counts (reset-stats ltm profile fix).
func (c *Counts) Reset() {
	c.FromClient.Store(0)
	c.FromServer.Store(0)
	c.Malformed.Store(0)
	c.Mapped.Store(0)
	c.reported.Store(0)
}

// Reverse is tags's inverse, for the member's messages back to the
// sender.
func Reverse(tags map[int]int) map[int]int {
	if tags == nil {
		return nil
	}
	r := make(map[int]int, len(tags))
	for k, v := range tags {
		r[v] = k
	}
	return r
}

// TagMap reads a tag-map data group's records (key: the tag number from
// the sender, value: the number toward the member); a record that is not
// two tag numbers, or two records onto one tag, is an error, since the
// map must be reversed for the member's answers.
func TagMap(records [][2]string) (map[int]int, error) {
	m := make(map[int]int, len(records))
	seen := make(map[int]int, len(records))
	for _, r := range records {
		from, ok1 := atoi([]byte(strings.TrimSpace(r[0])))
		to, ok2 := atoi([]byte(strings.Trim(strings.TrimSpace(r[1]), `"`)))
		if !ok1 || !ok2 || from == 0 || to == 0 {
			return nil, fmt.Errorf("record %q %q does not map a tag number to a tag number", r[0], r[1])
		}
		if header(from) || header(to) {
			return nil, fmt.Errorf("record %s %s: tags 8, 9, 10 and 35 cannot be mapped", r[0], r[1])
		}
		if f, dup := seen[to]; dup {
			return nil, fmt.Errorf("tags %d and %d both map to %d", f, from, to)
		}
		seen[to] = from
		m[from] = to
	}
	return m, nil
}

func header(tag int) bool {
	return tag == TagBeginString || tag == TagBodyLength || tag == TagCheckSum || tag == TagMsgType
}
