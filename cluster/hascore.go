package cluster

import (
	"strconv"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// HAPool is one pool of a `sys ha-group` as this device's monitors see
// it: the device's share of the HA score follows its pools' health, not
// only its own liveness.
type HAPool struct {
	Name string
	// Weight is the most the pool adds to the score (10 to 100).
	Weight int
	// MinThreshold (`minimum-threshold`, `threshold` before v13): with
	// fewer members up, the pool adds nothing.
	MinThreshold int
	// SufficientThreshold (`sufficient-threshold`): with this many
	// members up the pool adds its whole weight; 0 means all members.
	SufficientThreshold int
	Members, Up         int
}

// Contribution is the pool's share of the HA score: weight × the fraction
// of members up (of SufficientThreshold when set), rounded down; 0 below
// MinThreshold or when the pool has no members.
func (p HAPool) Contribution() int {
	if p.Members <= 0 || p.Up < p.MinThreshold || p.Up <= 0 {
		return 0
	}
	total := p.Members
	if p.SufficientThreshold > 0 && p.SufficientThreshold < total {
		total = p.SufficientThreshold
	}
	up := min(p.Up, total)
	return p.Weight * up / total
}

// HAScore is a device's HA score for an HA group's pools: the sum of
// their contributions (the active bonus is added where devices are
// compared, and only for the device active for the traffic group).
func HAScore(pools []HAPool) int {
	s := 0
	for _, p := range pools {
		s += p.Contribution()
	}
	return s
}

// withBonus is the score an active device is compared with: its own plus
// the active bonus, except at 0 (BIG-IP adds no bonus to a score of 0, so
// a device whose pools are all down always gives way).
func withBonus(score, bonus int) int {
	if score <= 0 {
		return score
	}
	return score + bonus
}

// SetScores publishes this device's HA score for each traffic group with
// an HA group (traffic group name → score); traffic groups without one
// are left out. A change moves a traffic group whose owner is outscored
// (see TrafficGroup.HAScore).
func (m *Member) SetScores(scores map[string]int) {
	m.mu.Lock()
	same := len(scores) == len(m.scores)
	for k, v := range scores {
		if w, ok := m.scores[k]; !ok || w != v {
			same = false
		}
	}
	if !same {
		m.scores = make(map[string]int, len(scores))
		for k, v := range scores {
			m.scores[k] = v
		}
	}
	m.mu.Unlock()
	if !same {
		m.poke()
	}
}

// publishScore writes the device's score for a traffic group under its
// lease when it changed or the lease did; it runs in the election's
// goroutine.
func (m *Member) publishScore(tg string, score int, lease clientv3.LeaseID) {
	if m.pubScores == nil {
		m.pubScores = map[string]pubScore{}
	}
	want := pubScore{score: score, lease: lease}
	if m.pubScores[tg] == want {
		if kv := m.mr.get(m.tgKey(tg, "score/"+m.me)); kv != nil && string(kv.Value) == strconv.Itoa(score) {
			return
		}
	}
	rctx, cancel := m.c.reqCtx(m.ctx)
	defer cancel()
	_, err := m.c.cli.Put(rctx, m.mr.prefix+m.tgKey(tg, "score/"+m.me), strconv.Itoa(score), clientv3.WithLease(lease))
	if m.c.note("publish the HA score of traffic group "+tg, err) == nil {
		m.pubScores[tg] = want
	}
}

type pubScore struct {
	score int
	lease clientv3.LeaseID
}

// scoresOf reads the devices' published scores for a traffic group; a
// device that published none counts as 0.
func (m *Member) scoresOf(tg string) map[string]int {
	out := map[string]int{}
	for d, kv := range m.mr.under(m.tgKey(tg, "score/")) {
		if n, err := strconv.Atoi(string(kv.Value)); err == nil {
			out[d] = n
		}
	}
	return out
}

// Scores are the HA scores the devices published for a traffic group
// (show cm traffic-group, show sys ha-group).
func (m *Member) Scores(tg string) map[string]int { return m.scoresOf(tg) }
