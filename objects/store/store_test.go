package store

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"
)

func TestCommitLatestGetPrune(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Latest(); ok || err != nil {
		t.Fatalf("new store: ok=%v err=%v", ok, err)
	}
	for i := 1; i <= Keep+5; i++ {
		id, err := s.Commit(Generation{User: "root", Summary: fmt.Sprint("cmd ", i), Config: fmt.Sprint("cfg ", i)})
		if err != nil {
			t.Fatal(err)
		}
		if id != uint64(i) {
			t.Fatalf("id %d, want %d", id, i)
		}
	}
	list, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != Keep || list[0].ID != 6 || list[len(list)-1].ID != Keep+5 {
		t.Fatalf("kept %d generations from %d", len(list), list[0].ID)
	}
	if _, err := s.Get(3); err == nil {
		t.Fatal("pruned generation still readable")
	}
	g, err := s.Get(50)
	if err != nil || g.Config != "cfg 50" || g.User != "root" {
		t.Fatalf("get 50: %+v %v", g, err)
	}
	s.Close()

	// Reopen: the last generation survives.
	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	g, ok, err := s.Latest()
	if err != nil || !ok || g.ID != Keep+5 || g.Config != fmt.Sprint("cfg ", Keep+5) {
		t.Fatalf("latest after reopen: %+v %v %v", g, ok, err)
	}
	// A second open of the same file is refused, not blocked forever.
	if _, err := Open(path); !errors.Is(err, ErrLocked) {
		t.Fatalf("second open: %v, want ErrLocked", err)
	}
}

// TestFiles keeps file contents across a reopen, once per checksum.
func TestFiles(t *testing.T) {
	path := t.TempDir() + "/config.db"
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.File("SHA1:1:x"); ok || err != nil {
		t.Fatalf("empty store: ok %v err %v", ok, err)
	}
	if err := s.PutFile("SHA1:5:abc", []byte("hello")); err != nil {
		t.Fatal(err)
	}
	if err := s.PutFile("SHA1:5:abc", []byte("other")); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	data, ok, err := s.File("SHA1:5:abc")
	if err != nil || !ok || string(data) != "hello" {
		t.Fatalf("File = %q %v %v", data, ok, err)
	}
	// Pruning keeps what a generation names, and only that.
	if err := s.PutFile("SHA1:3:def", []byte("bye")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Commit(Generation{Config: "sys file ifile /Common/a {\n    checksum SHA1:5:abc\n}\n"}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.PruneFiles(); n != 1 || err != nil {
		t.Fatalf("PruneFiles = %d, %v; want the one unnamed file", n, err)
	}
	if _, ok, _ := s.File("SHA1:5:abc"); !ok {
		t.Error("a named file was pruned")
	}
	if _, ok, _ := s.File("SHA1:3:def"); ok {
		t.Error("an unnamed file was kept")
	}
}
