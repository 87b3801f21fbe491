package l4

import "testing"

// A connection goes to the loop serving the fewest, staying on the loop
// that accepted it unless another serves at least two fewer.
func TestPickLoop(t *testing.T) {
	cases := []struct {
		name  string
		loads []int32
		own   int
		want  int
	}{
		{"own when all equal", []int32{3, 3, 3}, 1, 1},
		{"another serving fewer", []int32{5, 2, 4}, 0, 1},
		{"own among the least", []int32{2, 5, 2}, 2, 2},
		{"one fewer is not enough", []int32{4, 3}, 0, 0},
		{"two fewer", []int32{4, 2}, 0, 1},
		{"the fewest of several", []int32{6, 4, 3}, 0, 2},
		{"one loop", []int32{7}, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := &Engine{}
			for _, l := range c.loads {
				lr := &loopRT{e: e}
				lr.load.Store(l)
				e.loops.ls = append(e.loops.ls, lr)
			}
			if got := e.pickLoop(e.loops.ls[c.own]); got != e.loops.ls[c.want] {
				for i, lr := range e.loops.ls {
					if lr == got {
						t.Fatalf("pickLoop = loop %d, want %d", i, c.want)
					}
				}
			}
		})
	}
}
