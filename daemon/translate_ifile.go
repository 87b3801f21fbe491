package daemon

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/openltm/openltm/grammar"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/objects/dgfile"
	"github.com/openltm/openltm/rules"
)

// The iFile kinds: `sys file ifile` holds a file's content (imported from
// source-path, stored by checksum beside the generations), `ltm ifile` is
// the name rules give it.
var (
	sysFileIfile        = schema.MustKind("sys file ifile")
	sysFileSourcePath   = sysFileIfile.MustProp("source-path")
	sysFileChecksum     = sysFileIfile.MustProp("checksum")
	sysFileSize         = sysFileIfile.MustProp("size")
	sysFileRevision     = sysFileIfile.MustProp("revision")
	sysFileCreateTime   = sysFileIfile.MustProp("create-time")
	sysFileCreatedBy    = sysFileIfile.MustProp("created-by")
	sysFileUpdateTime   = sysFileIfile.MustProp("last-update-time")
	sysFileUpdatedBy    = sysFileIfile.MustProp("updated-by")
	sysFileMode         = sysFileIfile.MustProp("mode")
	ltmIfile            = schema.MustKind("ltm ifile")
	ltmIfileFileName    = ltmIfile.MustProp("file-name")
	specSysFileIfile    = schema.MustSpec("sys file ifile")
	tmshTimeFormat      = "2006-01-02:15:04:05"
	maxIfileSize        = int64(64 << 20)
	sysFileModeReadable = "33188" // a regular file, rw-r--r--, as BIG-IP lists it
)

// fileCache keeps the content of stored files in memory by checksum, so
// that a commit does not read the store again for files it already has.
type fileCache struct {
	mu sync.Mutex
	m  map[string][]byte
}

// reimportFile marks a sys file ifile whose source-path a modify sets
// (even to the same path) to be imported again, as BIG-IP re-reads the
// file then: its checksum is cleared, and the commit reads source-path.
func reimportFile(k *objects.Kind, o *objects.Object, rest []grammar.Node) {
	if k != sysFileIfile && k != sysFileDataGroup {
		return
	}
	if nodeAfter(rest, sysFileSourcePath.Name) != nil { // sslfiles.go
		delete(o.Props, sysFileChecksum.Name)
	}
}

// importFiles reads the content of every sys file ifile of cfg that has
// none stored yet (a new object, a new source-path, a configuration
// loaded from a file) and records its checksum, size and revision on the
// object, so the generation's text names the content it runs with. A file
// that cannot be read refuses the commit, naming the object and the path.
func (e *Engine) importFiles(old, cfg *objects.Config, user string) error {
	for _, k := range []*objects.Kind{sysFileIfile, sysFileDataGroup} {
		if err := e.importKind(k, old, cfg, user); err != nil {
			return err
		}
	}
	return nil
}

// importKind imports the files of one sys file kind. A data-group file
// whose records are not in BIG-IP's format is refused with the line and
// column of the first fault.
func (e *Engine) importKind(k *objects.Kind, old, cfg *objects.Config, user string) error {
	kind := k.Key()
	for _, o := range append([]*objects.Object(nil), cfg.Of(k)...) {
		sum := sysFileChecksum.Str(o)
		var prev *objects.Object
		if old != nil {
			prev = old.Get(k, o.Name)
		}
		if sum != "" {
			if prev != nil && sysFileChecksum.Str(prev) == sum && (k != sysFileDataGroup || sameDataGroupFormat(cfg, prev, o)) {
				continue
			}
			if _, ok, err := e.fileContent(sum); err != nil {
				return err
			} else if ok {
				if err := e.checkDataGroupFile(k, cfg, o, sum); err != nil {
					return err
				}
				continue
			}
			// A text from elsewhere names content this store lacks: import
			// it from source-path.
		}
		src := sysFileSourcePath.Str(o)
		path := strings.TrimPrefix(src, "file:")
		if src == "" || !filepath.IsAbs(path) {
			return objects.Invalid("%s %s: source-path %q must be file:/absolute/path of the file to import", kind, o.Name, src)
		}
		data, err := readLimited(path, maxIfileSize)
		if err != nil {
			return objects.Invalid("%s %s: cannot import source-path %s: %v", kind, o.Name, src, err)
		}
		if k == sysFileDataGroup {
			if _, err := dgfile.Parse(data, sysFileDGType.Effective(cfg, o), sysFileDGSeparator.Effective(cfg, o)); err != nil {
				return objects.Invalid("%s %s: %s:%v", kind, o.Name, path, err)
			}
		}
		h := sha1.Sum(data)
		sum = "SHA1:" + strconv.Itoa(len(data)) + ":" + hex.EncodeToString(h[:])
		if err := e.store.PutFile(sum, data); err != nil {
			return fmt.Errorf("storing %s %s: %w", kind, o.Name, err)
		}
		e.files.mu.Lock()
		if e.files.m == nil {
			e.files.m = map[string][]byte{}
		}
		e.files.m[sum] = data
		e.files.mu.Unlock()
		// The object may be shared with the running configuration: change a
		// copy.
		o = o.Clone()
		cfg.Put(o)
		now := time.Now().UTC().Format(tmshTimeFormat)
		rev, created, createdBy := int64(1), now, user
		if prev != nil {
			if r, err := strconv.ParseInt(sysFileRevision.Str(prev), 10, 64); err == nil {
				rev = r + 1
			}
			if t := sysFileCreateTime.Str(prev); t != "" {
				created, createdBy = t, sysFileCreatedBy.Str(prev)
			}
		}
		set := func(p *objects.Prop, v string) { o.Props[p.Name] = &objects.Value{Str: v} }
		set(sysFileChecksum, sum)
		set(sysFileSize, strconv.Itoa(len(data)))
		set(sysFileRevision, strconv.FormatInt(rev, 10))
		set(sysFileCreateTime, created)
		set(sysFileCreatedBy, createdBy)
		set(sysFileUpdateTime, now)
		set(sysFileUpdatedBy, user)
		set(sysFileMode, sysFileModeReadable)
	}
	return nil
}

// readLimited reads a whole regular file of at most max bytes.
func readLimited(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("no such file")
		}
		if os.IsPermission(err) {
			return nil, fmt.Errorf("permission denied")
		}
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("larger than %d MiB", max>>20)
	}
	return data, nil
}

// pruneFiles deletes, at start, the stored file contents no kept
// generation names any more (an iFile deleted, or imported again with
// other content, more than store.Keep generations ago).
func (e *Engine) pruneFiles() {
	n, err := e.store.PruneFiles()
	if err != nil {
		e.log.Warn("stored files not pruned", "err", err)
	} else if n > 0 {
		e.log.Info("stored files no generation names were deleted", "files", n)
	}
}

// fileContent returns a stored file's content by checksum.
func (e *Engine) fileContent(sum string) ([]byte, bool, error) {
	e.files.mu.Lock()
	data, ok := e.files.m[sum]
	e.files.mu.Unlock()
	if ok {
		return data, true, nil
	}
	data, ok, err := e.store.File(sum)
	if err != nil || !ok {
		return nil, ok, err
	}
	e.files.mu.Lock()
	if e.files.m == nil {
		e.files.m = map[string][]byte{}
	}
	e.files.m[sum] = data
	e.files.mu.Unlock()
	return data, true, nil
}

// ifileSet is a configuration's ltm ifiles as `ifile` commands see them,
// by full name, and their names in order for `ifile listall`.
type ifileSet struct {
	m     map[string]*rules.IFile
	names []string
}

// ifiles reads the ltm ifiles of cfg with the content of the sys file
// ifile each names; one whose file has no stored content is left out
// (rules then say it does not exist).
func (e *Engine) ifiles(cfg *objects.Config) ifileSet {
	out := ifileSet{m: map[string]*rules.IFile{}}
	for _, o := range cfg.Of(ltmIfile) {
		fo := cfg.Lookup(e.schema, specSysFileIfile, ltmIfileFileName.Str(o))
		if fo == nil {
			continue
		}
		data, ok, err := e.fileContent(sysFileChecksum.Str(fo))
		if err != nil || !ok {
			e.log.Warn("ltm ifile has no content", "ifile", o.Name, "sys-file", fo.Name, "err", err)
			continue
		}
		f := rules.NewIFile(o.Name, fo.Name, data)
		f.Checksum = sysFileChecksum.Str(fo)
		f.Revision, _ = strconv.ParseInt(sysFileRevision.Str(fo), 10, 64)
		f.CreatedBy = sysFileCreatedBy.Str(fo)
		f.LastUpdatedBy = sysFileUpdatedBy.Str(fo)
		f.CreateTime, _ = time.Parse(tmshTimeFormat, sysFileCreateTime.Str(fo))
		f.LastUpdateTime, _ = time.Parse(tmshTimeFormat, sysFileUpdateTime.Str(fo))
		out.m[o.Name] = f
		out.names = append(out.names, o.Name)
	}
	sort.Strings(out.names)
	return out
}

// lookup finds an ltm ifile by the name a rule gives: a full path,
// else in /Common.
func (s ifileSet) lookup(name string) (*rules.IFile, bool) {
	if f, ok := s.m[name]; ok {
		return f, true
	}
	if !strings.HasPrefix(name, "/") {
		f, ok := s.m["/Common/"+name]
		return f, ok
	}
	return nil, false
}
