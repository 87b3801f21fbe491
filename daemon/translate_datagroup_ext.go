package daemon

import (
	"sync"

	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/objects/dgfile"
	"github.com/openltm/openltm/rules"
)

// External data groups: `sys file data-group` holds the records (imported
// like an iFile's content, read by objects/dgfile), `ltm data-group
// external` is the name class commands give them.
var (
	sysFileDataGroup     = schema.MustKind("sys file data-group")
	sysFileDGType        = sysFileDataGroup.MustProp("type")
	sysFileDGSeparator   = sysFileDataGroup.MustProp("separator")
	specSysFileDataGroup = schema.MustSpec("sys file data-group")
	ltmDGExternal        = schema.MustKind("ltm data-group external")
	ltmDGExternalFile    = ltmDGExternal.MustProp("external-file-name")
	ltmDGExternalType    = ltmDGExternal.MustProp("type")
)

// sameDataGroupFormat reports whether a data-group file's type and
// separator are as before, so its stored records need no second reading.
func sameDataGroupFormat(cfg *objects.Config, prev, o *objects.Object) bool {
	return sysFileDGType.Effective(cfg, prev) == sysFileDGType.Effective(cfg, o) &&
		sysFileDGSeparator.Effective(cfg, prev) == sysFileDGSeparator.Effective(cfg, o)
}

// checkDataGroupFile reads the stored records of a data-group file whose
// type or separator a commit changes (or that a loaded configuration
// names by checksum), refusing the commit when they no longer read.
func (e *Engine) checkDataGroupFile(k *objects.Kind, cfg *objects.Config, o *objects.Object, sum string) error {
	if k != sysFileDataGroup {
		return nil
	}
	if _, err := e.dgRecords(cfg, o, sum); err != nil {
		return objects.Invalid("sys file data-group %s: the imported records (%s): %v", o.Name, sysFileSourcePath.Str(o), err)
	}
	return nil
}

// dgCache keeps the records read from data-group files by checksum, type
// and separator, so that a commit does not read a large file again.
type dgCache struct {
	mu sync.Mutex
	m  map[dgKey][]rules.Record
}

type dgKey struct{ sum, typ, sep string }

// dgRecords are a data-group file's records as class commands see them.
func (e *Engine) dgRecords(cfg *objects.Config, o *objects.Object, sum string) ([]rules.Record, error) {
	key := dgKey{sum, sysFileDGType.Effective(cfg, o), sysFileDGSeparator.Effective(cfg, o)}
	e.dgs.mu.Lock()
	recs, ok := e.dgs.m[key]
	e.dgs.mu.Unlock()
	if ok {
		return recs, nil
	}
	data, ok, err := e.fileContent(sum)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, objects.Invalid("no content is stored for checksum %s", sum)
	}
	parsed, err := dgfile.Parse(data, key.typ, key.sep)
	if err != nil {
		return nil, err
	}
	recs = make([]rules.Record, len(parsed))
	for i, r := range parsed {
		recs[i] = rules.Record{Key: r.Key, Value: r.Value}
	}
	e.dgs.mu.Lock()
	if e.dgs.m == nil {
		e.dgs.m = map[dgKey][]rules.Record{}
	}
	e.dgs.m[key] = recs
	e.dgs.mu.Unlock()
	return recs, nil
}

// externalDataGroups adds the configuration's external data groups to
// out, with the records of the file each names; one whose file has no
// stored content, or whose records do not fit, is left out and logged,
// as internal ones are. The cache keeps only the files in use.
func (e *Engine) externalDataGroups(cfg *objects.Config, out *dataGroupSet) {
	used := map[dgKey]bool{}
	for _, o := range cfg.Of(ltmDGExternal) {
		fo := cfg.Lookup(e.schema, specSysFileDataGroup, ltmDGExternalFile.Str(o))
		if fo == nil {
			continue
		}
		sum := sysFileChecksum.Str(fo)
		typ := sysFileDGType.Effective(cfg, fo)
		used[dgKey{sum, typ, sysFileDGSeparator.Effective(cfg, fo)}] = true
		recs, err := e.dgRecords(cfg, fo, sum)
		if err == nil {
			var dg *rules.DataGroup
			if dg, err = rules.NewDataGroup(o.Name, dataGroupTypeOf(typ), recs); err == nil {
				out.m[o.Name] = dg
				continue
			}
		}
		out.unused = append(out.unused, unusedDataGroup{o.Name, err})
	}
	e.dgs.mu.Lock()
	for k := range e.dgs.m {
		if !used[k] {
			delete(e.dgs.m, k)
		}
	}
	e.dgs.mu.Unlock()
}

// dataGroupTypeOf maps tmsh's type word to the rules' type.
func dataGroupTypeOf(typ string) rules.DataGroupType {
	switch typ {
	case "ip":
		return rules.DGAddress
	case "integer":
		return rules.DGInteger
	}
	return rules.DGString
}

// externalDataGroupTypes refuses an external data group whose own type
// is not its file's: BIG-IP takes the type from the file [M].
func (t *translator) externalDataGroupTypes() {
	for _, o := range t.cfg.Of(ltmDGExternal) {
		own := ltmDGExternalType.Str(o)
		fo := t.cfg.Lookup(t.s, specSysFileDataGroup, ltmDGExternalFile.Str(o))
		if own == "" || fo == nil {
			continue
		}
		if ft := sysFileDGType.Effective(t.cfg, fo); ft != own {
			t.refuse("ltm data-group external %s: type %s, but its sys file data-group %s holds %s records", o.Name, own, fo.Name, ft)
		}
	}
}
