package shell

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHistory(t *testing.T) {
	h := &history{path: filepath.Join(t.TempDir(), "sub", historyFile)}
	if got := h.load(); got != nil {
		t.Fatalf("fresh history %q", got)
	}
	for _, l := range []string{"list ltm pool", "", "  ", "two\nlines", "ltm"} {
		h.add(l)
	}
	if got := h.load(); strings.Join(got, "|") != "list ltm pool|ltm" {
		t.Fatalf("history %q", got)
	}
	fi, _ := os.Stat(h.path)
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("history mode %v", fi.Mode())
	}
}

func TestHistoryIsCompacted(t *testing.T) {
	h := &history{path: filepath.Join(t.TempDir(), historyFile)}
	f, _ := os.Create(h.path)
	for i := range 3 * historyKeep {
		fmt.Fprintf(f, "cmd %d\n", i)
	}
	f.Close()
	got := h.load()
	if len(got) != historyKeep || got[len(got)-1] != fmt.Sprintf("cmd %d", 3*historyKeep-1) {
		t.Fatalf("loaded %d lines ending %q", len(got), got[len(got)-1])
	}
	if again := h.load(); strings.Join(again, "|") != strings.Join(got, "|") {
		t.Fatal("compacting changed what is loaded")
	}
	b, _ := os.ReadFile(h.path)
	if n := strings.Count(string(b), "\n"); n != historyKeep {
		t.Fatalf("file holds %d lines after compaction", n)
	}
}

func TestPlainReader(t *testing.T) {
	var out strings.Builder
	r := &plainReader{in: strings.NewReader("ltm\r\nexit"), out: &out}
	var got []string
	for range 5 {
		l, err := r.ReadLine(context.Background(), LinePrompt{Text: "# "})
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, l.Text)
	}
	if strings.Join(got, "|") != "ltm|exit" || out.String() != "# # # \n" {
		t.Fatalf("lines %q, output %q", got, out.String())
	}
}
