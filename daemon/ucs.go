package daemon

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/openltm/openltm/grammar"
	"github.com/openltm/openltm/objects"
)

// UCS archives: a device's whole configuration in one file, as BIG-IP's
// `save sys ucs` makes before an upgrade or a risky change and `load sys
// ucs` puts back. An archive is a gzip-compressed tar holding the running
// configuration's text (config/bigip.conf, its secrets sealed), the
// stored copies of its certificates, keys and external monitor programs
// (config/filestore/...) and a manifest (ucs.json). The master key is not
// in it [M]: a device restoring another's archive must be given the same
// key first (modify sys crypto master-key prompt-for-password), as BIG-IP
// asks.

// ucsDir is where archives named without a path are kept, as BIG-IP keeps
// them in /var/local/ucs.
const ucsDir = "ucs"

// ucsManifest says where an archive comes from.
type ucsManifest struct {
	Format    int       `json:"format"`
	Version   string    `json:"version"`
	Hostname  string    `json:"hostname"`
	Created   time.Time `json:"created"`
	StateDir  string    `json:"state-dir"` // the filestore paths in the text start with it
	MasterKey string    `json:"master-key-hash"`
	Objects   int       `json:"objects"`
}

// ucsPath is where an archive named name is: a bare name in STATE/ucs
// (with .ucs added when it has no extension), a path as given.
func (s *Session) ucsPath(name string) string {
	if !strings.ContainsRune(name, '/') {
		if filepath.Ext(name) == "" {
			name += ".ucs"
		}
		return filepath.Join(s.e.StateDir(), ucsDir, name)
	}
	return s.absPath(name)
}

// saveUCS is save sys ucs NAME.
func (s *Session) saveUCS(st *grammar.Statement, ws []string, w io.Writer) error {
	usage := []string{"save sys ucs NAME"}
	if len(ws) != 1 {
		return synErr(st, usage, "save sys ucs takes the archive's name")
	}
	file := s.ucsPath(ws[0])
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return err
	}
	cur := s.e.cur.Load()
	bi, _ := debug.ReadBuildInfo()
	version := moduleVersion(bi) // shows_sys.go
	hash := s.e.masterKeyHash()
	m := ucsManifest{Format: 1, Version: version, Hostname: s.e.Hostname(), Created: time.Now().UTC(),
		StateDir: s.e.StateDir(), MasterKey: hash, Objects: cur.cfg.Len()}
	fmt.Fprintf(w, "Saving active configuration...\n")
	tmp, err := os.CreateTemp(filepath.Dir(file), ".ucs-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := writeUCS(tmp, m, cur.text, filepath.Join(s.e.StateDir(), filestoreDir)); err != nil {
		tmp.Close()
		return fmt.Errorf("saving %s: %w", file, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		return err
	}
	fmt.Fprintf(w, "%s is saved.\n", file)
	return nil
}

func writeUCS(out io.Writer, m ucsManifest, text, filestore string) error {
	zw := gzip.NewWriter(out)
	tw := tar.NewWriter(zw)
	add := func(name string, mode int64, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: int64(len(data)), ModTime: m.Created, Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	mj, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := add("ucs.json", 0o600, append(mj, '\n')); err != nil {
		return err
	}
	if err := add("config/bigip.conf", 0o600, []byte(text)); err != nil {
		return err
	}
	err = filepath.WalkDir(filestore, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == filestore {
				return nil // nothing stored yet
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(filestore, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return add("config/filestore/"+filepath.ToSlash(rel), int64(info.Mode().Perm()), data)
	})
	if err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// ucsContent is an archive read back.
type ucsContent struct {
	manifest ucsManifest
	text     string
	files    map[string][]byte // filestore-relative path -> content
	modes    map[string]os.FileMode
}

// maxUCSMember bounds one file of an archive read back (a certificate,
// a key, a program, the configuration text).
const maxUCSMember = 256 << 20

func readUCS(file string) (*ucsContent, error) {
	f, err := os.Open(file)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, objects.Invalid("the UCS archive %s does not exist", file)
		}
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, objects.Invalid("%s is not a UCS archive: %v", file, err)
	}
	tr := tar.NewReader(zr)
	c := &ucsContent{files: map[string][]byte{}, modes: map[string]os.FileMode{}}
	var haveManifest, haveText bool
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, objects.Invalid("%s is damaged: %v", file, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		if !filepath.IsLocal(h.Name) || slices.Contains(strings.Split(h.Name, "/"), "..") {
			return nil, objects.Invalid("%s: %s points outside the filestore", file, h.Name)
		}
		if h.Size > maxUCSMember {
			return nil, objects.Invalid("%s: %s is larger than %d bytes", file, h.Name, maxUCSMember)
		}
		data, err := io.ReadAll(io.LimitReader(tr, maxUCSMember))
		if err != nil {
			return nil, objects.Invalid("%s is damaged: %v", file, err)
		}
		switch name := path.Clean(h.Name); {
		case name == "ucs.json":
			if err := json.Unmarshal(data, &c.manifest); err != nil {
				return nil, objects.Invalid("%s: its manifest cannot be read: %v", file, err)
			}
			haveManifest = true
		case name == "config/bigip.conf":
			c.text, haveText = string(data), true
		case strings.HasPrefix(name, "config/filestore/"):
			rel := strings.TrimPrefix(name, "config/filestore/")
			if !filepath.IsLocal(rel) {
				return nil, objects.Invalid("%s: %s points outside the filestore", file, h.Name)
			}
			c.files[rel] = data
			c.modes[rel] = os.FileMode(h.Mode).Perm()
		}
	}
	if !haveManifest || !haveText {
		return nil, objects.Invalid("%s is not a UCS archive openltm made (no ucs.json or config/bigip.conf)", file)
	}
	if c.manifest.Format != 1 {
		return nil, objects.Invalid("%s: UCS format %d is not one this openltm reads", file, c.manifest.Format)
	}
	return c, nil
}

// loadUCS is load sys ucs NAME [no-license] [no-platform-check]: the
// archive's stored files are put back in this device's filestore and its
// configuration replaces the running one (one generation; refused whole,
// as load sys config is, when it cannot run).
func (s *Session) loadUCS(ctx context.Context, st *grammar.Statement, ws []string, w io.Writer) error {
	usage := []string{"load sys ucs NAME [no-license] [no-platform-check]"}
	if len(ws) == 0 {
		return synErr(st, usage, "load sys ucs takes the archive's name")
	}
	for _, o := range ws[1:] {
		switch o {
		case "no-license", "no-platform-check", "reset-trust":
			// openltm has no license or platform to keep; trust is the
			// cluster's (etcd), not the archive's.
		default:
			return synErr(st, usage, "%q unknown property", o)
		}
	}
	file := s.ucsPath(ws[0])
	c, err := readUCS(file)
	if err != nil {
		return err
	}
	hash := s.e.masterKeyHash()
	if c.manifest.MasterKey != "" && c.manifest.MasterKey != hash && strings.Contains(c.text, "$M$") {
		return objects.Invalid("%s was saved on %s, whose master key (hash %s) is not this device's (hash %s): its secrets cannot be decrypted here. Give this device that key first (modify sys crypto master-key prompt-for-password, with the password it was made from); nothing was changed",
			file, c.manifest.Hostname, c.manifest.MasterKey, hash)
	}
	store := filepath.Join(s.e.StateDir(), filestoreDir)
	rels := make([]string, 0, len(c.files))
	for rel := range c.files {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	for _, rel := range rels {
		dst := filepath.Join(store, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return err
		}
		if err := writeFileAtomic(dst, c.files[rel]); err != nil {
			return fmt.Errorf("restoring %s: %w", rel, err)
		}
		if err := os.Chmod(dst, c.modes[rel]|0o400); err != nil {
			return err
		}
	}
	text := c.text
	if from := c.manifest.StateDir; from != "" && from != s.e.StateDir() {
		// The stored copies' paths name the saving device's state
		// directory: they are this one's now.
		text = strings.ReplaceAll(text, filepath.Join(from, filestoreDir)+string(filepath.Separator), store+string(filepath.Separator))
	}
	tmp, err := os.CreateTemp("", "ucs-*.conf")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.WriteString(tmp, text); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	fmt.Fprintf(w, "Loading UCS %s (saved on %s, %s, %d objects)...\n", file, c.manifest.Hostname, c.manifest.Created.Format(time.RFC3339), c.manifest.Objects)
	inner, err := parse("load sys config file "+grammar.Quote(tmp.Name()), nil)
	if err != nil {
		return err
	}
	inner.Source = st.Source // the history names the archive, not the temporary file
	rw := &strings.Builder{}
	err = s.load(ctx, inner, inner.Items[1:], rw)
	fmt.Fprint(w, strings.ReplaceAll(rw.String(), tmp.Name(), file))
	if err != nil {
		return errors.New(strings.ReplaceAll(err.Error(), tmp.Name(), file))
	}
	return nil
}

// ucsCommand answers list sys ucs and delete sys ucs NAME; handled is
// false for everything else.
func (s *Session) ucsCommand(st *grammar.Statement, verb string, args []grammar.Node, w io.Writer) (bool, error) {
	abs := s.moduleFor(headWords(args))
	if !hasPrefix(abs, []string{"sys", "ucs"}) {
		return false, nil
	}
	rest := abs[2:]
	switch verb {
	case "list", "show":
		dir := filepath.Join(s.e.StateDir(), ucsDir)
		var files []string
		if len(rest) > 0 {
			for _, n := range rest {
				files = append(files, s.ucsPath(n))
			}
		} else {
			ents, err := os.ReadDir(dir)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return true, err
			}
			for _, e := range ents {
				if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".ucs") {
					files = append(files, filepath.Join(dir, e.Name()))
				}
			}
		}
		for _, f := range files {
			c, err := readUCS(f)
			if err != nil {
				return true, err
			}
			st, err := os.Stat(f)
			if err != nil {
				return true, err
			}
			fmt.Fprintf(w, "sys ucs %s {\n    file-created-date %s\n    file-size %d\n    hostname %s\n    master-key-hash %s\n    objects %d\n    version %s\n}\n",
				f, c.manifest.Created.Format(time.RFC3339), st.Size(), grammar.Quote(c.manifest.Hostname), grammar.Quote(noneIfEmpty(c.manifest.MasterKey)), c.manifest.Objects, grammar.Quote(c.manifest.Version))
		}
		return true, nil
	case "delete":
		if len(rest) != 1 {
			return true, synErr(st, []string{"delete sys ucs NAME"}, "delete sys ucs takes the archive's name")
		}
		f := s.ucsPath(rest[0])
		if _, err := readUCS(f); err != nil {
			return true, err
		}
		return true, os.Remove(f)
	}
	return false, nil
}

func noneIfEmpty(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
