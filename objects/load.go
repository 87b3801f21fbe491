package objects

import (
	"fmt"
	"strings"

	"github.com/openltm/openltm/grammar"
)

// Loaded is a configuration text read against the schema: the objects it
// defines and what reading found, refused (category 1) or kept without
// being acted on (category 2). Nothing of it is applied while Findings holds
// a refusal.
type Loaded struct {
	File     string
	Objects  []*Object
	Findings Findings
	// where each object was defined, and where each word of its statement
	// is (by the full path the word names), for findings about references.
	at map[*Object]*stmtWords
}

type stmtWords struct {
	pos   grammar.Pos
	words map[string][]wordSeen
}

// ReadText reads a whole bigip.conf text in folder. Unlike a first-error
// read, every statement is read, so one call reports everything BIG-IP
// would refuse, each with its position; statements that are refused are
// left out of Objects.
func (s *Schema) ReadText(filename string, src []byte, folder string) *Loaded {
	return s.readText(filename, src, folder, false)
}

// ReadStored reads a configuration openltm stored itself (a generation):
// what this version's vocabulary refuses but an earlier openltm kept
// (unknown kinds and properties) is kept again, with warnings, so that an
// upgrade restores what was running. Syntax errors are still errors.
func (s *Schema) ReadStored(filename string, src []byte) ([]*Object, Findings, error) {
	l := s.readText(filename, src, "/Common", true)
	if err := l.Err(false); err != nil {
		return nil, l.Findings, err
	}
	l.declarePartitions(s)
	return l.Objects, l.Findings, nil
}

func (s *Schema) readText(filename string, src []byte, folder string, lenient bool) *Loaded {
	l := &Loaded{File: filename, at: map[*Object]*stmtWords{}}
	file, err := grammar.Parse(filename, src)
	if err != nil {
		l.Findings = append(l.Findings, findingOf(err, filename))
		return l
	}
	r := &Reader{Schema: s, Folder: folder, Mode: ModeLoad, Lenient: lenient}
	defined := map[string]grammar.Pos{}
	for _, st := range file.Statements {
		if cmd := tmshCommand(st); cmd != "" {
			// Published .scf files often start with the command they are
			// meant to be pasted after (load sys config merge from-terminal).
			l.Findings = append(l.Findings, Finding{Pos: st.Pos, Category: NotActedOn,
				Msg: fmt.Sprintf("%q is a tmsh command, not configuration; skipped", cmd)})
			continue
		}
		o, err := r.ReadObject(st)
		l.Findings = append(l.Findings, r.Findings...)
		r.Findings = nil
		if err != nil {
			l.Findings = append(l.Findings, findingOf(err, filename))
			continue
		}
		if o.Kind != nil && !o.Kind.Singleton {
			if _, dup := defined[o.Key()]; dup {
				f := findingOf(Exists(o.Kind, o.Name), filename)
				f.Pos = st.Pos
				l.Findings = append(l.Findings, f)
				continue
			}
			defined[o.Key()] = st.Pos
		}
		l.Objects = append(l.Objects, o)
		l.at[o] = &stmtWords{pos: st.Pos, words: wordPositions(st, r.folder())}
	}
	for i := range l.Findings {
		if l.Findings[i].Pos.File == "" && l.Findings[i].Pos.Line > 0 {
			l.Findings[i].Pos.File = filename
		}
	}
	return l
}

// Err is the error that refuses the text, nil when it may be applied;
// strict refuses what would be kept without being acted on, too.
func (l *Loaded) Err(strict bool) error { return l.Findings.Err(strict) }

// wordSeen is where a word stood: its position, the word before it in its
// block, and the word before the block (the property a collection is).
type wordSeen struct {
	pos       grammar.Pos
	prev, key string
}

// wordPositions indexes the words of a statement by the full path they
// name (and, for node:port members, by the node), so a finding about a
// reference can point at the word that made it.
func wordPositions(st *grammar.Statement, folder string) map[string][]wordSeen {
	m := map[string][]wordSeen{}
	var walk func(ns []grammar.Node, key string)
	walk = func(ns []grammar.Node, key string) {
		prev := ""
		for _, n := range ns {
			switch n := n.(type) {
			case *grammar.Word:
				at := wordSeen{pos: n.Pos, prev: prev, key: key}
				m[FullPath(folder, n.Text)] = append(m[FullPath(folder, n.Text)], at)
				if n.Text != FullPath(folder, n.Text) {
					m[n.Text] = append(m[n.Text], at)
				}
				if node, _, err := SplitMember(n.Text); err == nil {
					m[FullPath(folder, node)] = append(m[FullPath(folder, node)], at)
				}
				prev = n.Text
			case *grammar.Block:
				walk(n.Items, prev)
				prev = ""
			}
		}
	}
	walk(st.Items, "")
	return m
}

// refPos is where the reference r of o was written: the word naming it
// after the property's name or in the property's block.
func (l *Loaded) refPos(o *Object, r Ref) grammar.Pos {
	sw := l.at[o]
	if sw == nil {
		return grammar.Pos{File: l.File}
	}
	ats := sw.words[r.Name]
	for _, at := range ats {
		if at.prev == r.Prop || at.key == r.Prop || (r.Prop == "monitor" && (at.prev == "and" || at.key == "of")) {
			return at.pos
		}
	}
	if len(ats) > 0 {
		return ats[0].pos
	}
	return sw.pos
}

// CheckRefs adds the findings that need the configuration the text will
// join: a reference to an object that exists neither in running, nor in the
// text, nor among F5's built-in objects is refused (BIG-IP's 01020036); one
// to an F5 built-in openltm does not ship is kept with a warning; objects
// in a partition that exists nowhere are kept, and the partition is added
// to Objects with a warning (BIG-IP declares partitions in bigip_base.conf,
// which a merge of bigip.conf alone does not carry). running may be nil.
func (l *Loaded) CheckRefs(s *Schema, running *Config) {
	var c *Config
	if running != nil {
		c = running.Clone()
	} else {
		c = s.Builtins()
	}
	for _, o := range l.Objects {
		c.Put(o)
	}
	l.addPartitions(s, c)
	c.completeNodes(s, true)
	for _, o := range l.Objects {
		if o.Kind == nil {
			continue
		}
		for _, r := range Refs(o) {
			if t := c.Lookup(s, r.Spec, r.Name); t != nil {
				if m := keptRefMsg(o, r, t); m != "" { // keptrefs.go
					l.Findings = append(l.Findings, Finding{Pos: l.refPos(o, r), Category: NotActedOn, Msg: m})
				}
				continue
			}
			pos := l.refPos(o, r)
			if KeptBuiltin(s, r) != "" { // keptrefs.go: it resolves on a BIG-IP
				if m := keptBuiltinMsg(s, o, r); m != "" {
					l.Findings = append(l.Findings, Finding{Pos: pos, Category: NotActedOn, Msg: m})
				}
				continue
			}
			if IsF5Builtin(r.Spec, r.Name) {
				lower := "object"
				if k := specLower(s, r.Spec); k != nil {
					lower = k.Lower
				}
				l.Findings = append(l.Findings, Finding{Pos: pos, Category: NotActedOn,
					Msg: fmt.Sprintf("%s %s refers to the F5 built-in %s %s, which openltm does not ship; kept, and not acted on", o.Kind.Key(), o.Name, lower, r.Name)})
				continue
			}
			f := findingOf(NotFound(specLower(s, r.Spec), r.Name), l.File)
			f.Pos = pos
			l.Findings = append(l.Findings, f)
		}
	}
}

// addPartitions declares the partitions the text's objects live in when
// neither the text nor the configuration does.
func (l *Loaded) addPartitions(s *Schema, c *Config) {
	pk := s.Kind("auth partition")
	if pk == nil {
		return
	}
	seen := map[string]bool{}
	for _, o := range l.Objects {
		if !pathNamed(o) {
			continue
		}
		p := Partition(o.Name)
		if seen[p] || partitionExists(s, c, p) {
			continue
		}
		seen[p] = true
		po := &Object{Kind: pk, Name: p, Props: map[string]*Value{}}
		c.Put(po)
		l.Objects = append(l.Objects, po)
		l.Findings = append(l.Findings, Finding{Pos: l.at[o].pos, Category: NotActedOn,
			Msg: fmt.Sprintf("partition %s is not declared (BIG-IP keeps auth partition %s in bigip_base.conf); declared with it", p, p)})
	}
}

// pathNamed reports whether o is named by a /Partition/name path.
func pathNamed(o *Object) bool {
	return o.Kind != nil && !o.Kind.Singleton && !o.Kind.PlainNames && o.Kind.Key() != "gtm topology" &&
		o.Kind.Key() != "sys folder" && strings.HasPrefix(o.Name, "/")
}

// partitionExists reports whether partition p is declared in c.
func partitionExists(s *Schema, c *Config, p string) bool {
	if p == "Common" {
		return true
	}
	if k := s.Kind("auth partition"); k != nil && c.Get(k, p) != nil {
		return true
	}
	if k := s.Kind("sys folder"); k != nil && c.Get(k, "/"+p) != nil {
		return true
	}
	return false
}

// CheckPartitions refuses objects in partitions that do not exist, as
// BIG-IP does (01070734 "folder does not exist").
func (c *Config) CheckPartitions(s *Schema) error {
	for _, o := range c.objs {
		if !pathNamed(o) || o.BuiltIn {
			continue
		}
		if !partitionExists(s, c, Partition(o.Name)) {
			return Invalid("Can't associate %s (%s) folder does not exist", o.Kind.Title, o.Name)
		}
	}
	return nil
}

// tmshCommand returns the text of a statement that is the tmsh command
// `load sys config ...` rather than an object, else "".
func tmshCommand(st *grammar.Statement) string {
	var ws []string
	for _, n := range st.Items {
		w, ok := n.(*grammar.Word)
		if !ok {
			return ""
		}
		ws = append(ws, w.Text)
	}
	if len(ws) >= 3 && ws[0] == "load" && ws[1] == "sys" && ws[2] == "config" {
		return strings.Join(ws, " ")
	}
	return ""
}

// declarePartitions adds an auth partition object for each partition the
// text's objects live in that the text does not declare, with a warning:
// a bigip.conf of a partition is loaded apart from the bigip_base.conf that
// declares it.
func (l *Loaded) declarePartitions(s *Schema) {
	c := NewConfig()
	for _, o := range l.Objects {
		c.Put(o)
	}
	l.addPartitions(s, c)
}
