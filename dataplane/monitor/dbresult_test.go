package monitor

import "testing"

func TestDBCheckHolds(t *testing.T) {
	sets := []dbTable{
		{{[]byte("ok"), nil}, {[]byte("ready"), []byte("2")}},
		{{[]byte("second"), []byte("")}},
	}
	for _, c := range []struct {
		name string
		d    DBCheck
		want bool
	}{
		{"anywhere", DBCheck{Recv: "ready"}, true},
		{"its row and column", DBCheck{Recv: "2", RecvRow: 2, RecvColumn: 2}, true},
		{"another row", DBCheck{Recv: "ready", RecvRow: 1}, false},
		{"another column", DBCheck{Recv: "ready", RecvColumn: 2}, false},
		{"rows count in each result set", DBCheck{Recv: "second", RecvRow: 1, RecvColumn: 1}, true},
		{"an empty string is not NULL", DBCheck{Recv: "", RecvRow: 1, RecvColumn: 2}, true},
		{"past the last row", DBCheck{Recv: "ok", RecvRow: 3}, false},
		{"absent", DBCheck{Recv: "down"}, false},
	} {
		if got := c.d.holds(sets); got != c.want {
			t.Errorf("%s: holds = %v, want %v", c.name, got, c.want)
		}
	}
	// A NULL cell holds nothing, not even "".
	if (&DBCheck{Recv: "", RecvRow: 1, RecvColumn: 2}).holds(sets[:1]) {
		t.Error("a NULL cell matched the empty string")
	}
}
