package state

import (
	"crypto/tls"
	"testing"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// TestSSLHeldCounts runs sequences of connections established (hold),
// ended (release, each perhaps more than once) and reset-stats against
// one profile's counters, checking current, maximum and total after
// each sequence.
func TestSSLHeldCounts(t *testing.T) {
	for _, tc := range []struct {
		name          string
		ops           string // h<i>: hold conn i, r<i>: release conn i, R: reset
		cur, max, tot int64
	}{
		{"nothing", "", 0, 0, 0},
		{"one open", "h0", 1, 1, 1},
		{"one closed", "h0 r0", 0, 1, 1},
		{"released twice", "h0 r0 r0", 0, 1, 1},
		{"held twice", "h0 h0", 1, 1, 1},
		{"released, never held", "r0", 0, 0, 0},
		{"high-water", "h0 h1 h2 r1 r0 h3", 2, 3, 4},
		{"reset with two open", "h0 h1 h2 r1 R", 2, 2, 0},
		{"reset, then closed", "h0 h1 R r0 r1", 0, 2, 0},
		{"reset, then more", "h0 R h1 h2", 3, 3, 2},
		{"held again after its release", "h0 r0 h0", 1, 1, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c SSLCounters
			var held [4]SSLHeld
			for _, op := range splitOps(tc.ops) {
				switch op[0] {
				case 'h':
					held[op[1]-'0'].Hold(&c)
				case 'r':
					held[op[1]-'0'].Release()
				case 'R':
					c.Reset()
				}
			}
			if c.Cur.Load() != tc.cur || c.Max.Load() != tc.max || int64(c.Tot.Load()) != tc.tot {
				t.Fatalf("%s: current/maximum/total %d/%d/%d, want %d/%d/%d", tc.ops, c.Cur.Load(), c.Max.Load(), c.Tot.Load(), tc.cur, tc.max, tc.tot)
			}
		})
	}
}

func splitOps(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j] != ' ' {
			j++
		}
		if j > i {
			out = append(out, s[i:j])
		}
		i = j + 1
	}
	return out
}

// TestNoteClientTLSHolds: a client-ssl handshake that succeeded is held
// at the profile that served it; a failed one is counted as a failure
// and held nowhere.
func TestNoteClientTLSHolds(t *testing.T) {
	snap := &VirtualSnap{Cfg: &config.Virtual{TLS: &config.TLS{}}, ClientSSL: []*SSLCounters{{}}}
	c := snap.ClientSSL[0]
	ok, err := handshake(t, tls.VersionTLS13, tls.VersionTLS13, false)
	if err != nil {
		t.Fatal(err)
	}
	var h SSLHeld
	if snap.NoteClientTLS(ok, nil, &h) != nil || c.Cur.Load() != 1 || c.Tot.Load() != 1 || c.Full.Load() != 1 {
		t.Fatalf("a handshake done: current %d total %d full %d, want 1 1 1", c.Cur.Load(), c.Tot.Load(), c.Full.Load())
	}
	bad, err := handshake(t, tls.VersionTLS12, tls.VersionTLS11, false)
	if err == nil {
		t.Fatal("a handshake with no common version succeeded")
	}
	var h2 SSLHeld
	if snap.NoteClientTLS(bad, err, &h2) == nil || c.Cur.Load() != 1 || c.Tot.Load() != 1 || c.Failures.Load() != 1 {
		t.Fatalf("a failed handshake: current %d total %d failures %d, want 1 1 1", c.Cur.Load(), c.Tot.Load(), c.Failures.Load())
	}
	h2.Release()
	h.Release()
	if c.Cur.Load() != 0 || c.Max.Load() != 1 {
		t.Fatalf("after the end: current %d maximum %d, want 0 1", c.Cur.Load(), c.Max.Load())
	}
}
