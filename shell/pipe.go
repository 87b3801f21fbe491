package shell

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/openltm/openltm/control"
)

// A pipeline is what tmsh runs a command's output through after a "|":
// `list ltm pool | grep -A 2 address | head`. The filters are written here
// rather than run as processes, so they behave the same on every host and
// a pipe can never start a program; they take the whole output once the
// command has finished.
type pipeline []filter

// filter turns one stage's lines into the next stage's.
type filter func(lines []string) []string

// pipeCommands are the programs output may be piped to, with what each
// does, for errors and for completion.
var pipeCommands = map[string]string{
	"cat":   "Print the output unchanged",
	"egrep": "Print lines matching an extended regular expression (grep -E)",
	"fgrep": "Print lines containing a fixed string (grep -F)",
	"grep":  "Print lines matching a pattern: -i -v -c -n -w -x -E -F -e PAT -m N -A N -B N -C N",
	"head":  "Print the first lines: -n N (10)",
	"less":  "Print the output (no paging here)",
	"more":  "Print the output (no paging here)",
	"sort":  "Sort lines: -r -n -u -f",
	"tail":  "Print the last lines: -n N (10), -n +N from line N",
	"uniq":  "Drop repeated adjacent lines: -c -d -u -i",
	"wc":    "Count lines, words and bytes: -l -w -c",
}

func pipeNames() string {
	names := make([]string, 0, len(pipeCommands))
	for n := range pipeCommands {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// parsePipeline reads the text after a statement's first "|": stages
// separated by further "|", each a command and its arguments, quoted with
// "..." or '...' as in a shell. Nothing runs when a stage is wrong.
func parsePipeline(text string) (pipeline, error) {
	stages, err := pipeWords(text)
	if err != nil {
		return nil, err
	}
	var p pipeline
	for _, args := range stages {
		if len(args) == 0 {
			return nil, fmt.Errorf(`Syntax Error: "|" must be followed by a command; valid: %s`, pipeNames())
		}
		var f filter
		switch args[0] {
		case "grep", "egrep", "fgrep":
			f, err = grepFilter(args)
		case "head", "tail":
			f, err = headTailFilter(args)
		case "wc":
			f, err = wcFilter(args)
		case "sort":
			f, err = sortFilter(args)
		case "uniq":
			f, err = uniqFilter(args)
		case "cat", "more", "less":
			f = func(lines []string) []string { return lines }
		default:
			return nil, fmt.Errorf(`Syntax Error: %q is not a command output can be piped to; valid: %s`, args[0], pipeNames())
		}
		if err != nil {
			return nil, err
		}
		p = append(p, f)
	}
	return p, nil
}

// pipeWords splits the stages and their words. A "|" inside quotes is a
// character of the word.
func pipeWords(text string) ([][]string, error) {
	var stages [][]string
	var words []string
	var cur strings.Builder
	inWord := false
	end := func() {
		if inWord {
			words = append(words, cur.String())
			cur.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '|':
			end()
			stages = append(stages, words)
			words = nil
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			end()
		case c == '"' || c == '\'':
			j := strings.IndexByte(text[i+1:], c)
			if j < 0 {
				return nil, fmt.Errorf("Syntax Error: the quote %c opened at column %d of the pipe is not closed", c, i+1)
			}
			part := text[i+1 : i+1+j]
			if c == '"' {
				part = strings.NewReplacer(`\"`, `"`, `\\`, `\`).Replace(part)
			}
			cur.WriteString(part)
			inWord = true
			i += j + 1
		case c == '\\' && i+1 < len(text):
			cur.WriteByte(text[i+1])
			inWord = true
			i++
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	end()
	return append(stages, words), nil
}

// run passes the command's output through every stage.
func (p pipeline) run(out []byte) []byte {
	s := string(out)
	s = strings.TrimSuffix(s, "\n")
	var lines []string
	if s != "" || len(out) > 0 {
		lines = strings.Split(s, "\n")
	}
	for _, f := range p {
		lines = f(lines)
	}
	if len(lines) == 0 {
		return nil
	}
	return []byte(strings.Join(lines, "\n") + "\n")
}

// flags walks a stage's options: single-letter flags may be grouped (-iv),
// and an option taking a value takes the rest of its word or the next word
// (-A2, -A 2). It stops at the first argument or at "--".
type flags struct {
	name string
	args []string
	i    int
}

// next returns the next option, and its value when the option is one of
// withValue; ok is false once the options end.
func (f *flags) next(withValue string) (opt byte, value string, ok bool, err error) {
	if f.i >= len(f.args) {
		return 0, "", false, nil
	}
	a := f.args[f.i]
	if a == "--" {
		f.i++
		return 0, "", false, nil
	}
	if len(a) < 2 || a[0] != '-' {
		return 0, "", false, nil
	}
	if a[1] >= '0' && a[1] <= '9' { // -5: a count (head, tail, grep context)
		f.i++
		return '#', a[1:], true, nil
	}
	opt = a[1]
	rest := a[2:]
	if strings.IndexByte(withValue, opt) >= 0 {
		f.i++
		if rest == "" {
			if f.i >= len(f.args) {
				return 0, "", false, fmt.Errorf("%s: option -%c needs a value", f.name, opt)
			}
			rest = f.args[f.i]
			f.i++
		}
		return opt, rest, true, nil
	}
	if rest == "" {
		f.i++
	} else {
		f.args[f.i] = "-" + rest
	}
	return opt, "", true, nil
}

func (f *flags) rest() []string { return f.args[f.i:] }

func count(name string, opt byte, v string) (int, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(v, "+"))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s: -%c needs a number, not %q", name, opt, v)
	}
	return n, nil
}

func badOption(name string, opt byte, valid string) error {
	return fmt.Errorf("%s: unknown option -%c; valid: %s", name, opt, valid)
}

// grepFilter is grep as GNU grep prints it: matches, with -n their line
// numbers, with -A/-B/-C context lines and "--" between separate groups.
// A pattern without -E is a basic regular expression.
func grepFilter(args []string) (filter, error) {
	name := args[0]
	ext, fixed := name == "egrep", name == "fgrep"
	var icase, invert, countOnly, number, word, whole bool
	var patterns []string
	after, before, maxCount := 0, 0, -1
	fl := &flags{name: name, args: slices.Clone(args[1:])}
	for {
		opt, v, ok, err := fl.next("eABCm")
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		switch opt {
		case 'i':
			icase = true
		case 'v':
			invert = true
		case 'c':
			countOnly = true
		case 'n':
			number = true
		case 'w':
			word = true
		case 'x':
			whole = true
		case 'E':
			ext, fixed = true, false
		case 'F':
			fixed, ext = true, false
		case 'e':
			patterns = append(patterns, v)
		case 'A', 'B', 'C', '#', 'm':
			n, err := count(name, opt, v)
			if err != nil {
				return nil, err
			}
			switch opt {
			case 'A':
				after = n
			case 'B':
				before = n
			case 'm':
				maxCount = n
			default:
				after, before = n, n
			}
		default:
			return nil, badOption(name, opt, "-i -v -c -n -w -x -E -F -e PATTERN -m N -A N -B N -C N")
		}
	}
	rest := fl.rest()
	if len(patterns) == 0 {
		if len(rest) == 0 {
			return nil, fmt.Errorf("%s: a pattern is needed: %s PATTERN", name, name)
		}
		patterns, rest = rest[:1], rest[1:]
	}
	if len(rest) > 0 {
		return nil, fmt.Errorf("%s: reads the command's output, not files: %q", name, rest[0])
	}
	var alts []string
	for _, p := range patterns {
		switch {
		case fixed:
			p = regexp.QuoteMeta(p)
		case !ext:
			p = basicToRE2(p)
		}
		alts = append(alts, "(?:"+p+")")
	}
	expr := strings.Join(alts, "|")
	if word {
		expr = `(?:^|[^\w])(?:` + expr + `)(?:[^\w]|$)`
	}
	if whole {
		expr = `^(?:` + expr + `)$`
	}
	if icase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("%s: the pattern %q is not a valid regular expression: %v", name, strings.Join(patterns, "|"), err)
	}
	return func(lines []string) []string {
		var out []string
		matches, lastPrinted, afterLeft := 0, -1, 0
		emit := func(i int, sep string) {
			if lastPrinted >= 0 && i > lastPrinted+1 && (after > 0 || before > 0) {
				out = append(out, "--")
			}
			if number {
				out = append(out, strconv.Itoa(i+1)+sep+lines[i])
			} else {
				out = append(out, lines[i])
			}
			lastPrinted = i
		}
		for i, l := range lines {
			if maxCount >= 0 && matches >= maxCount {
				if afterLeft > 0 && !countOnly {
					emit(i, "-")
					afterLeft--
					continue
				}
				break
			}
			if re.MatchString(l) != invert {
				matches++
				if countOnly {
					continue
				}
				for j := max(i-before, lastPrinted+1); j < i; j++ {
					emit(j, "-")
				}
				emit(i, ":")
				afterLeft = after
			} else if afterLeft > 0 && !countOnly {
				emit(i, "-")
				afterLeft--
			}
		}
		if countOnly {
			return []string{strconv.Itoa(matches)}
		}
		return out
	}, nil
}

// basicToRE2 reads a POSIX basic regular expression (grep without -E):
// \( \) \{ \} \| \+ \? are the operators and the bare characters are
// literal, the other way round from extended ones.
func basicToRE2(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p) && strings.IndexByte("(){}|+?", p[i+1]) >= 0:
			b.WriteByte(p[i+1])
			i++
		case c == '\\' && i+1 < len(p):
			b.WriteByte(c)
			b.WriteByte(p[i+1])
			i++
		case strings.IndexByte("(){}|+?", c) >= 0:
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '*' && (i == 0 || (i == 1 && p[0] == '^')):
			b.WriteString(`\*`)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// headTailFilter keeps the first (head) or last (tail) N lines; tail -n +N
// starts at line N.
func headTailFilter(args []string) (filter, error) {
	name := args[0]
	n, fromStart := 10, false
	fl := &flags{name: name, args: slices.Clone(args[1:])}
	for {
		opt, v, ok, err := fl.next("n")
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		switch opt {
		case 'n', '#':
			if n, err = count(name, 'n', v); err != nil {
				return nil, err
			}
			fromStart = name == "tail" && strings.HasPrefix(v, "+")
		default:
			return nil, badOption(name, opt, "-n N")
		}
	}
	if rest := fl.rest(); len(rest) > 0 {
		if name == "tail" && strings.HasPrefix(rest[0], "+") && len(rest) == 1 {
			var err error
			if n, err = count(name, 'n', rest[0]); err != nil {
				return nil, err
			}
			fromStart = true
		} else {
			return nil, fmt.Errorf("%s: reads the command's output, not files: %q", name, rest[0])
		}
	}
	return func(lines []string) []string {
		switch {
		case name == "head":
			return lines[:min(n, len(lines))]
		case fromStart:
			return lines[min(max(n-1, 0), len(lines)):]
		default:
			return lines[max(len(lines)-n, 0):]
		}
	}, nil
}

// switches reads a filter's options when they are all single letters
// without values (wc, sort, uniq): the set given, or an error naming an
// option not in valid (shown as the help lists them) or a file operand.
func switches(args []string, valid, shown string) (map[byte]bool, error) {
	name := args[0]
	set := map[byte]bool{}
	fl := &flags{name: name, args: slices.Clone(args[1:])}
	for {
		opt, _, ok, err := fl.next("")
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if strings.IndexByte(valid, opt) < 0 {
			return nil, badOption(name, opt, shown)
		}
		set[opt] = true
	}
	if rest := fl.rest(); len(rest) > 0 {
		return nil, fmt.Errorf("%s: reads the command's output, not files: %q", name, rest[0])
	}
	return set, nil
}

// wcFilter counts as wc does on its standard input: one bare number for
// one count, columns of seven otherwise.
func wcFilter(args []string) (filter, error) {
	want, err := switches(args, "lwcm", "-l -w -c")
	if err != nil {
		return nil, err
	}
	if len(want) == 0 {
		want = map[byte]bool{'l': true, 'w': true, 'c': true}
	}
	return func(lines []string) []string {
		var l, w, c, m int
		for _, s := range lines {
			l++
			w += len(strings.FieldsFunc(s, unicode.IsSpace))
			c += len(s) + 1
			m += len([]rune(s)) + 1
		}
		var cols []string
		for _, k := range []byte("lwmc") {
			if !want[k] {
				continue
			}
			v := map[byte]int{'l': l, 'w': w, 'c': c, 'm': m}[k]
			cols = append(cols, strconv.Itoa(v))
		}
		if len(cols) == 1 {
			return cols
		}
		for i, s := range cols {
			cols[i] = fmt.Sprintf("%7s", s)
		}
		return []string{strings.Join(cols, " ")}
	}, nil
}

// sortFilter sorts lines as sort does in the C locale (byte order), or by
// their leading number with -n.
func sortFilter(args []string) (filter, error) {
	set, err := switches(args, "rnuf", "-r -n -u -f")
	if err != nil {
		return nil, err
	}
	reverse, numeric, unique, fold := set['r'], set['n'], set['u'], set['f']
	key := func(s string) string {
		if fold {
			return strings.ToUpper(s)
		}
		return s
	}
	cmp := func(a, b string) int {
		if numeric {
			if c := leadingNumber(a) - leadingNumber(b); c != 0 {
				if c < 0 {
					return -1
				}
				return 1
			}
		}
		return strings.Compare(key(a), key(b))
	}
	return func(lines []string) []string {
		out := slices.Clone(lines)
		slices.SortStableFunc(out, cmp)
		if unique {
			out = slices.CompactFunc(out, func(a, b string) bool { return cmp(a, b) == 0 })
		}
		if reverse {
			slices.Reverse(out)
		}
		return out
	}, nil
}

func leadingNumber(s string) float64 {
	s = strings.TrimLeft(s, " \t")
	end := 0
	for end < len(s) && (s[end] >= '0' && s[end] <= '9' || s[end] == '.' || (end == 0 && s[end] == '-')) {
		end++
	}
	v, _ := strconv.ParseFloat(s[:end], 64)
	return v
}

// uniqFilter drops adjacent repeats; -c prefixes counts as uniq prints
// them, -d keeps only repeated lines, -u only lines never repeated.
func uniqFilter(args []string) (filter, error) {
	set, err := switches(args, "cdui", "-c -d -u -i")
	if err != nil {
		return nil, err
	}
	counts, dups, uniques, fold := set['c'], set['d'], set['u'], set['i']
	same := func(a, b string) bool {
		if fold {
			return strings.EqualFold(a, b)
		}
		return a == b
	}
	return func(lines []string) []string {
		var out []string
		for i := 0; i < len(lines); {
			j := i + 1
			for j < len(lines) && same(lines[i], lines[j]) {
				j++
			}
			n := j - i
			if (!dups || n > 1) && (!uniques || n == 1) {
				if counts {
					out = append(out, fmt.Sprintf("%7d %s", n, lines[i]))
				} else {
					out = append(out, lines[i])
				}
			}
			i = j
		}
		return out
	}, nil
}

// pipeSuggestions completes the word after a "|": the commands output may
// be piped to. Their options are not completed.
func pipeSuggestions(filters string) []control.Suggestion {
	stages, err := pipeWords(filters)
	if err != nil || len(stages) == 0 {
		return nil
	}
	last := stages[len(stages)-1]
	partial := ""
	trailingSpace := strings.HasSuffix(filters, " ") || strings.HasSuffix(filters, "\t")
	switch {
	case len(last) == 1 && !trailingSpace:
		partial = last[0]
	case len(last) > 0:
		return nil
	}
	var out []control.Suggestion
	for name, help := range pipeCommands {
		if strings.HasPrefix(name, partial) {
			out = append(out, control.Suggestion{Text: name, Description: help})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Text < out[j].Text })
	return out
}

// writeFiltered runs p over out and writes the result to w.
func writeFiltered(w *tailWriter, p pipeline, out *bytes.Buffer) {
	if b := p.run(out.Bytes()); len(b) > 0 {
		_, _ = w.Write(b)
	}
}
