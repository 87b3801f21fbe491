package daemon

import (
	"bytes"
	"context"
	"io"
	"testing"
)

func TestRegisterRuntime(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	answer := func(text string) RuntimeFunc {
		return func(_ context.Context, _ *Session, _, _ []string, w io.Writer) error {
			_, err := io.WriteString(w, text)
			return err
		}
	}
	for _, tc := range []struct {
		name  string
		cmd   RuntimeCommand
		panic bool
	}{
		{"a kind", RuntimeCommand{"show", "ltm pool", answer("pools\n")}, false},
		{"a runtime target", RuntimeCommand{"delete", "sys connection", answer("")}, false},
		{"a misspelt kind", RuntimeCommand{"show", "ltm pools", answer("")}, true},
		{"a verb no runtime answers", RuntimeCommand{"list", "ltm pool", answer("")}, true},
		{"no function", RuntimeCommand{"show", "ltm node", nil}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if r := recover(); (r != nil) != tc.panic {
					t.Errorf("panic %v, want a panic: %v", r, tc.panic)
				}
			}()
			e.RegisterRuntime([]RuntimeCommand{tc.cmd})
		})
	}
	var b bytes.Buffer
	if err := e.NewSession("admin").(*Session).Exec(context.Background(), "show ltm pool", &b); err != nil || b.String() != "pools\n" {
		t.Errorf("show ltm pool: %q %v", b.String(), err)
	}
}
