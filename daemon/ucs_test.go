package daemon

import (
	"archive/tar"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestReadUCS(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.ucs")
	f, err := os.Create(good)
	if err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(dir, "filestore")
	os.MkdirAll(filepath.Join(store, "ssl"), 0o700)
	os.WriteFile(filepath.Join(store, "ssl", "a.crt"), []byte("PEM"), 0o600)
	m := ucsManifest{Format: 1, Hostname: "h", Created: time.Now(), StateDir: dir, Objects: 3}
	if err := writeUCS(f, m, "ltm pool /Common/p { }\n", store); err != nil {
		t.Fatal(err)
	}
	f.Close()
	c, err := readUCS(good)
	if err != nil {
		t.Fatal(err)
	}
	if c.text != "ltm pool /Common/p { }\n" || string(c.files["ssl/a.crt"]) != "PEM" || c.manifest.Hostname != "h" {
		t.Fatalf("read back: %+v", c)
	}

	mk := func(name string, members map[string]string) string {
		p := filepath.Join(dir, name)
		f, _ := os.Create(p)
		zw := gzip.NewWriter(f)
		tw := tar.NewWriter(zw)
		for n, body := range members {
			tw.WriteHeader(&tar.Header{Name: n, Mode: 0o600, Size: int64(len(body)), Typeflag: tar.TypeReg})
			tw.Write([]byte(body))
		}
		tw.Close()
		zw.Close()
		f.Close()
		return p
	}
	os.WriteFile(filepath.Join(dir, "plain.txt"), []byte("not gzip"), 0o600)
	for _, c := range []struct {
		file, err string
	}{
		{mk("escape.ucs", map[string]string{"ucs.json": `{"format":1}`, "config/bigip.conf": "", "config/filestore/../../x": "evil"}), "points outside the filestore"},
		{mk("nomanifest.ucs", map[string]string{"config/bigip.conf": ""}), "no ucs.json"},
		{mk("future.ucs", map[string]string{"ucs.json": `{"format":9}`, "config/bigip.conf": ""}), "format 9"},
		{mk("badjson.ucs", map[string]string{"ucs.json": `{`, "config/bigip.conf": ""}), "manifest cannot be read"},
		{filepath.Join(dir, "plain.txt"), "is not a UCS archive"},
		{filepath.Join(dir, "absent.ucs"), "does not exist"},
	} {
		if _, err := readUCS(c.file); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: %v, want %q", filepath.Base(c.file), err, c.err)
		}
	}
}
