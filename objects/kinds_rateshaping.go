package objects

import (
	"strconv"
	"strings"

	"github.com/openltm/openltm/grammar"
)

// rateShapingKinds are BIG-IP's rate shaping (`net rate-shaping`). A
// class acts: a virtual's rate-class and the rules' rateclass put flows
// in it, whose bytes in its direction wait on its buckets
// (dataplane/bwc/class.go: its rate, bursting with max-burst, borrowing
// up to its ceiling from its parent's spare); rate-percentage and
// ceiling-percentage take a share of the parent's, and a shaping-policy
// gives the class its percentages and max-burst. A class's queue and
// drop-policy, and the queue, drop-policy and color-policer kinds, are
// kept and saved with a warning: openltm's streams wait on the buckets
// in turn and are never dropped (TCP holds the sender back).
// Properties and defaults: F5's tmsh reference pages of each kind and
// the iControl REST reference of net/rate-shaping/class, shaping-policy
// and color-policer (direction any, drop-policy tail, max-burst 0,
// ceiling the rate's); the class's queue default sfq is the iControl
// SOAP reference's (LocalLB::RateClass::set_queueing_method) [M]; the
// queue's and drop-policy's numeric settings and their 0 defaults are
// as remembered, not read from a system [M].
func rateShapingKinds() []*Kind {
	cls := actOn(pk("net rate-shaping class", "Rate Class", "", tmshRef("net rate-shaping class"), `
rate str 0
rate-percentage int 0
ceiling str 0
ceiling-percentage int 0
max-burst int 0
direction enum any any|to-client|to-server
parent ref net+rate-shaping+class none
shaping-policy ref net+rate-shaping+shaping-policy none
queue ref net+rate-shaping+queue sfq
drop-policy ref net+rate-shaping+drop-policy tail
`), "Rate class: the flows of the virtual servers that name it (rate-class), and those rules put in it (rateclass), get its rate, bursting to its ceiling with its parent's spare",
		"rate", "rate-percentage", "ceiling", "ceiling-percentage", "max-burst", "direction", "parent", "shaping-policy")
	cls.Lower = "rate class"
	for _, p := range cls.Props {
		switch p.Name {
		case "rate":
			p.Format = "bitrate"
			p.Help = "the class's guaranteed rate: a number of bits per second, or with bps, kbps, mbps or gbps (or rate-percentage of the parent's)"
		case "rate-percentage":
			p.Max = 100
			p.Help = "the class's rate as a percentage (1 to 100) of its parent's rate"
		case "ceiling":
			p.Format = "bitrate"
			p.Help = "the most the class reaches borrowing its parent's spare: bits per second as rate (0: the rate, no borrowing); at least the rate"
		case "ceiling-percentage":
			p.Max = 100
			p.Help = "the class's ceiling as a percentage (1 to 100) of its parent's ceiling"
		case "max-burst":
			p.Help = "bytes the class may send beyond its rate after a pause (0: none)"
		case "direction":
			p.Help = "the traffic the class shapes: any, to-client (what the members send) or to-server (what the clients send)"
		case "parent":
			p.Help = "the class whose spare this class borrows up to its ceiling, and whose rate its bytes count against"
		case "shaping-policy":
			p.Help = "a shaping policy whose rate-percentage, ceiling-percentage and max-burst the class takes"
		case "queue":
			p.Passive, p.Checked = true, true
			p.Help = "the queue discipline (pfifo, sfq or a net rate-shaping queue): kept, not acted on (each flow waits its turn on the class's buckets)"
		case "drop-policy":
			p.Passive, p.Checked = true, true
			p.Help = "the drop policy (tail, red, fred or a net rate-shaping drop-policy): kept, not acted on (streams wait and are never dropped)"
		}
	}
	sp := actOn(pk("net rate-shaping shaping-policy", "Shaping Policy", "", tmshRef("net rate-shaping shaping-policy"), `
rate-percentage int 0
ceiling-percentage int 0
max-burst int 0
queue ref net+rate-shaping+queue none
drop-policy ref net+rate-shaping+drop-policy none
`), "Shaping policy: the classes that name it take its rate-percentage, ceiling-percentage and max-burst",
		"rate-percentage", "ceiling-percentage", "max-burst")
	sp.Lower = "shaping policy"
	for _, p := range sp.Props {
		switch p.Name {
		case "rate-percentage", "ceiling-percentage":
			p.Max = 100
		case "queue", "drop-policy":
			p.Checked = true
		}
	}
	q := pk("net rate-shaping queue", "Queue", "", tmshRef("net rate-shaping queue"), `
type enum pfifo pfifo|sfq
pfifo-min-packets int 0
sfq-bucket-depth int 0
sfq-hash-buckets int 0
sfq-perturbation-interval int 0
`)
	q.Lower = "queue"
	dp := pk("net rate-shaping drop-policy", "Drop Policy", "", tmshRef("net rate-shaping drop-policy"), `
type enum tail tail|red|fred
average-packet-size int 0
fred-max-active int 0
fred-max-drop int 0
fred-min-drop int 0
inverse-weight int 0
max-probability int 0
max-threshold int 0
min-threshold int 0
red-hard-limit int 0
`)
	dp.Lower = "drop policy"
	cp := pk("net rate-shaping color-policer", "Color Policer", "", tmshRef("net rate-shaping color-policer"), `
action str drop-red
committed-information-rate str 0
committed-burst-size str 0
excess-burst-size str 0
`)
	cp.Lower = "color policer"
	return []*Kind{cls, sp, q, dp, cp}
}

// validBitRate reports whether s is a rate as tmsh takes one: a number of
// bits per second, or one with bps, kbps, mbps or gbps (any case).
func validBitRate(s string) bool {
	_, ok := bitRate(s)
	return ok
}

// bitRate reads a rate (validBitRate) in bits per second.
func bitRate(s string) (uint64, bool) {
	s = strings.ToLower(s)
	mult := uint64(1)
	for i, u := range []string{"gbps", "mbps", "kbps", "bps"} {
		if strings.HasSuffix(s, u) {
			s = strings.TrimSuffix(s, u)
			mult = []uint64{1e9, 1e6, 1e3, 1}[i]
			break
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || s == "" || s[0] == '+' || n > ^uint64(0)/mult {
		return 0, false
	}
	return n * mult, true
}

// rateWords are the rate and ceiling one statement gives a rate class,
// so that a ceiling below the rate is refused at its line:column (one
// given alone is checked against the other at commit,
// daemon/translate_rateshaping.go).
type rateWords struct{ rate, ceiling *grammar.Word }

// see notes the value word of a rate property kw.
func (r *rateWords) see(kw *grammar.Word, rest []grammar.Node) {
	w, ok := rest[0].(*grammar.Word)
	if !ok {
		return
	}
	switch kw.Text {
	case "rate":
		r.rate = w
	case "ceiling":
		r.ceiling = w
	}
}

// check refuses a ceiling (other than 0, the rate's) below the rate.
func (r *rateWords) check() error {
	if r.rate == nil || r.ceiling == nil {
		return nil
	}
	rate, _ := bitRate(r.rate.Text)
	c, _ := bitRate(r.ceiling.Text)
	if c != 0 && c < rate {
		return synErr(r.ceiling, []string{"a ceiling of at least " + r.rate.Text}, "ceiling %s is less than rate %s: a class's ceiling must be at least its rate", r.ceiling.Text, r.rate.Text)
	}
	return nil
}
