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
// gives the class its percentages, max-burst, queue and drop-policy. A
// class's queue (pfifo or sfq) and drop-policy (tail, red or fred) act
// on its UDP flows' datagrams (dataplane/bwc/qdisc.go); streams wait on
// the buckets in turn and are never dropped (TCP holds the sender
// back). A queue's sfq-hash-buckets and sfq-perturbation-interval are
// kept with a warning (openltm hashes no flows together), and so is
// every color-policer: BIG-IP applies one to a vCMP guest's traffic
// profile, not to a rate class or a virtual server, and openltm has no
// vCMP guests.
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
		"rate", "rate-percentage", "ceiling", "ceiling-percentage", "max-burst", "direction", "parent", "shaping-policy", "queue", "drop-policy")
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
			p.Help = "the queue discipline of the class's UDP datagrams (pfifo: one queue for the class; sfq: each flow's own, served in turn; or a net rate-shaping queue)"
		case "drop-policy":
			p.Help = "what the class's UDP queues drop before they are full (tail: nothing; red, fred: at random between the thresholds; or a net rate-shaping drop-policy); streams are never dropped"
		}
	}
	sp := actOn(pk("net rate-shaping shaping-policy", "Shaping Policy", "", tmshRef("net rate-shaping shaping-policy"), `
rate-percentage int 0
ceiling-percentage int 0
max-burst int 0
queue ref net+rate-shaping+queue none
drop-policy ref net+rate-shaping+drop-policy none
`), "Shaping policy: the classes that name it take its rate-percentage, ceiling-percentage, max-burst, queue and drop-policy",
		"rate-percentage", "ceiling-percentage", "max-burst", "queue", "drop-policy")
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
	q = acting(q, "Queue discipline: the classes that name it queue their UDP datagrams in one queue (pfifo, bounded at pfifo-min-packets) or in each flow's own (sfq, bounded at sfq-bucket-depth)", func(n string) bool {
		return n != "sfq-hash-buckets" && n != "sfq-perturbation-interval"
	})
	q.Lower = "queue"
	for _, p := range q.Props {
		switch p.Name {
		case "pfifo-min-packets":
			p.Help = "pfifo: the datagrams the class's queue holds besides its byte bound, half a second of the ceiling (0: the byte bound alone)"
		case "sfq-bucket-depth":
			p.Help = "sfq: the datagrams each flow's queue holds besides its byte bound (0: the byte bound alone)"
		case "sfq-hash-buckets", "sfq-perturbation-interval":
			p.Help = "kept: each flow has its own queue in openltm, no two flows share a hash bucket"
		}
	}
	dp := pk("net rate-shaping drop-policy", "Drop Policy", "", tmshRef("net rate-shaping drop-policy"), `
type enum tail tail|red|fred
average-packet-size int 0
fred-max-active int 0
fred-max-drop int 0
fred-min-drop int 0
inverse-weight enum 0 0|64|128|256|512|1024
max-probability int 0
max-threshold int 0
min-threshold int 0
red-hard-limit int 0
`)
	dp = acting(dp, "Drop policy: what the UDP queues of the classes that name it drop before they are full (tail nothing; red and fred at random once the average queue passes min-threshold)", func(string) bool { return true })
	dp.Lower = "drop policy"
	// Ranges: F5's iControl REST reference of net/rate-shaping/drop-policy
	// (https://clouddocs.f5.com/api/icontrol-rest/APIRef_tm_net_rate-shaping_drop-policy.html);
	// the thresholds count datagrams queued [M: F5 gives no unit].
	for _, p := range dp.Props {
		switch p.Name {
		case "average-packet-size":
			p.Max = 10000
			p.Help = "bytes of a typical datagram, with which the average queue decays while the queue is idle (0: 1000)"
		case "fred-max-active":
			p.Max = 10000
			p.Help = "fred: the flows that may have datagrams in a pfifo class's queue at once (0: any number)"
		case "fred-max-drop":
			p.Max = 400
			p.Help = "fred: the datagrams a flow may queue, past which all its datagrams are dropped (0: max-threshold)"
		case "fred-min-drop":
			p.Max = 100
			p.Help = "fred: the datagrams a flow may queue without an early drop (0: 2)"
		case "inverse-weight":
			p.Help = "1/weight of the average queue length: 64, 128, 256, 512 or 1024 (0: 512)"
		case "max-probability":
			p.Max = 100
			p.Help = "the percentage of datagrams dropped as the average queue nears max-threshold (0: 10)"
		case "max-threshold":
			p.Help = "the average queue (datagrams) past which every arriving datagram is dropped (0: half the queue's room)"
		case "min-threshold":
			p.Help = "the average queue (datagrams) past which datagrams are dropped at random (0: a third of max-threshold); at most max-threshold"
		case "red-hard-limit":
			p.Help = "the datagrams queued past which every arriving one is dropped (0: the queue's own bound)"
		}
	}
	cp := pk("net rate-shaping color-policer", "Color Policer", "", tmshRef("net rate-shaping color-policer"), `
action str drop-red
committed-information-rate str 0
committed-burst-size str 0
excess-burst-size str 0
`)
	cp.Lower = "color policer"
	cp.Help = "Color policer: kept, not acted on; BIG-IP applies one to a vCMP guest's traffic profile, which openltm does not have"
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

// thresholdWords are the min-threshold and max-threshold one statement
// gives a drop policy, so that a min above the max is refused at its
// line:column (one given alone is checked against the other at commit,
// daemon/translate_rateshaping.go).
type thresholdWords struct{ min, max *grammar.Word }

// see notes the value word of a threshold property kw.
func (r *thresholdWords) see(kw *grammar.Word, rest []grammar.Node) {
	if len(rest) == 0 {
		return
	}
	w, ok := rest[0].(*grammar.Word)
	if !ok {
		return
	}
	switch kw.Text {
	case "min-threshold":
		r.min = w
	case "max-threshold":
		r.max = w
	}
}

// check refuses a min-threshold above a max-threshold (other than 0,
// which takes a default).
func (r *thresholdWords) check() error {
	if r.min == nil || r.max == nil {
		return nil
	}
	lo, _ := strconv.ParseUint(r.min.Text, 10, 64)
	hi, _ := strconv.ParseUint(r.max.Text, 10, 64)
	if hi != 0 && lo > hi {
		return synErr(r.min, []string{"a min-threshold of at most " + r.max.Text}, "min-threshold %s is more than max-threshold %s: the random drops start below where they all drop", r.min.Text, r.max.Text)
	}
	return nil
}
