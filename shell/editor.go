//go:build linux || darwin || freebsd || netbsd || openbsd

package shell

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	prompt "github.com/c-bata/go-prompt"

	"github.com/openltm/openltm/control"
)

// wordSeparators end the word that completion replaces.
const wordSeparators = " \t{}"

// editor is the LineReader on a real terminal, built on go-prompt. It uses
// go-prompt's single-line Input rather than Run: Run installs signal
// handlers that call os.Exit (skipping every deferred cleanup, leaving the
// terminal raw), while Input leaves signals to the shell.
type editor struct {
	p   *prompt.Prompt
	tty *tty
	out io.Writer // the terminal, for clearing it on a resize

	mu      sync.Mutex
	prefix  string
	primary string
	literal bool // the line is data: no help, no completion
}

// newEditor sets up go-prompt on the terminal at fd. complete answers Tab
// with the text before the cursor; history preloads Up-arrow.
func newEditor(fd int, complete func(before string) []control.Suggestion, history []string) (ed *editor, err error) {
	t, err := newTTY(fd)
	if err != nil {
		return nil, err
	}
	ed = &editor{tty: t, out: os.Stdout}
	completer := func(d prompt.Document) []prompt.Suggest {
		before := d.TextBeforeCursor()
		ed.mu.Lock()
		literal := ed.literal
		ed.mu.Unlock()
		if strings.TrimSpace(before) == "" || literal {
			return nil
		}
		var out []prompt.Suggest
		for _, s := range complete(before) {
			out = append(out, prompt.Suggest{Text: s.Text, Description: s.Description})
		}
		return prompt.FilterHasPrefix(out, d.GetWordBeforeCursorUntilSeparator(wordSeparators), true)
	}
	// prompt.New opens /dev/tty and panics when there is none (a terminal
	// on stdin without a controlling terminal); the caller then falls back
	// to a plain line loop.
	defer func() {
		if r := recover(); r != nil {
			ed, err = nil, fmt.Errorf("cannot start the line editor: %v", r)
		}
	}()
	ed.p = prompt.New(func(string) {}, completer,
		prompt.OptionParser(t),
		prompt.OptionLivePrefix(ed.livePrefix),
		prompt.OptionPrefixTextColor(prompt.DefaultColor),
		prompt.OptionHistory(history),
		prompt.OptionCompletionWordSeparator(wordSeparators),
		prompt.OptionMaxSuggestion(10),
		prompt.OptionSetExitCheckerOnInput(func(string, bool) bool { return t.exiting() }),
		prompt.OptionAddASCIICodeBind(prompt.ASCIICodeBind{ASCIICode: []byte("?"), Fn: ed.question}),
	)
	return ed, nil
}

// livePrefix shows the continuation prompt, or the primary one once Ctrl-C
// has abandoned the block being typed.
func (ed *editor) livePrefix() (string, bool) {
	ed.mu.Lock()
	defer ed.mu.Unlock()
	ed.tty.mu.Lock()
	interrupted := ed.tty.interrupted
	ed.tty.mu.Unlock()
	if interrupted {
		return ed.primary, true
	}
	return ed.prefix, true
}

// question handles `?`: help for what comes next, unless the `?` is
// escaped or inside a quoted string, where it is just a character.
func (ed *editor) question(b *prompt.Buffer) {
	before := b.Document().TextBeforeCursor()
	ed.mu.Lock()
	literal := ed.literal
	ed.mu.Unlock()
	if literal || strings.HasSuffix(before, `\`) || insideQuote(before) {
		b.InsertText("?", false, true)
		return
	}
	ed.tty.endNow(true, before)
}

// insideQuote reports whether text ends inside an unclosed "..." string.
func insideQuote(text string) bool {
	in := false
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\\':
			i++
		case '"':
			in = !in
		}
	}
	return in
}

// maxRedraws bounds the redraws of one read, whatever a window manager
// sends.
const maxRedraws = 1000

// Resized redraws the line being read at the window's new size.
func (ed *editor) Resized() { ed.tty.endForResize() }

// KeepRaw implements rawKeeper.
func (ed *editor) KeepRaw() func() { return ed.tty.pin() }

// ReadLine implements LineReader.
func (ed *editor) ReadLine(ctx context.Context, p LinePrompt) (Line, error) {
	ed.mu.Lock()
	ed.prefix, ed.primary, ed.literal = p.Text, p.Primary, p.Literal
	ed.mu.Unlock()
	ed.tty.begin()
	stop := context.AfterFunc(ctx, func() { ed.tty.endNow(false, "") })
	defer stop()

	text := ed.p.Input()
	t := ed.tty
	for range maxRedraws {
		t.mu.Lock()
		redraw := t.resize && !t.stop && !t.eof && !t.help
		t.mu.Unlock()
		if !redraw {
			break
		}
		// Clear the screen and draw the line again at the new width; the
		// text typed so far stays in go-prompt's buffer.
		io.WriteString(ed.out, "\x1b[H\x1b[2J")
		t.again()
		text = ed.p.Input()
	}

	t.mu.Lock()
	defer t.mu.Unlock()
	line := Line{Text: text, Interrupted: t.interrupted}
	switch {
	case t.stop:
		if err := ctx.Err(); err != nil {
			return Line{}, err
		}
		return Line{}, io.EOF
	case t.eof:
		return Line{}, io.EOF
	case t.help:
		line.Text, line.Help = t.helpText, true
	case text == "" && t.lastCtrlD:
		return Line{}, io.EOF
	}
	return line, nil
}
