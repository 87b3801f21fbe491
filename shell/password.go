package shell

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/openltm/openltm/grammar"
	"golang.org/x/term"
)

// masterKeyPrompt reports whether a statement is `modify sys crypto
// master-key prompt-for-password`, which asks for the password here: it is
// typed twice without echo and sent to ltmd, never written in the history.
func masterKeyPrompt(text string) bool {
	f := strings.Fields(text)
	return len(f) == 5 && f[0] == "modify" && f[1] == "sys" && f[2] == "crypto" && f[3] == "master-key" && f[4] == "prompt-for-password"
}

// passwordPrompt is what tmsh asks, twice.
const passwordPrompt = "enter password: "

// masterKey asks for the new master key's password twice and has ltmd
// derive the key from it.
func (r *runner) masterKey(ctx context.Context, w io.Writer) error {
	if r.secret == nil {
		return errors.New("prompt-for-password needs a terminal or standard input to read the password from")
	}
	first, err := r.secret(ctx, passwordPrompt)
	if err != nil {
		return err
	}
	again, err := r.secret(ctx, passwordPrompt)
	if err != nil {
		return err
	}
	if first != again {
		return errors.New("the passwords do not match; the master key is unchanged")
	}
	if first == "" {
		return errors.New("the password is empty; the master key is unchanged")
	}
	return r.sess.Exec(ctx, "modify sys crypto master-key password "+grammar.Quote(first), w)
}

// terminalSecret reads a password from the terminal f without echo.
func terminalSecret(f *os.File, out io.Writer, prompt string) (string, error) {
	fmt.Fprint(out, prompt)
	b, err := term.ReadPassword(int(f.Fd()))
	fmt.Fprintln(out)
	return string(b), err
}

// lineSecrets reads passwords from in: without echo when it is a terminal,
// else one line each (a script feeding tmsh).
func lineSecrets(in io.Reader, errw io.Writer) func(context.Context, string) (string, error) {
	var br *bufio.Reader
	return func(_ context.Context, prompt string) (string, error) {
		if in == nil {
			return "", errors.New("prompt-for-password: there is no standard input to read the password from")
		}
		if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			return terminalSecret(f, errw, prompt)
		}
		if br == nil {
			br = bufio.NewReader(in)
		}
		line, err := br.ReadString('\n')
		if err != nil && (line == "" || !errors.Is(err, io.EOF)) {
			return "", fmt.Errorf("prompt-for-password: reading the password: %w", err)
		}
		return strings.TrimRight(line, "\r\n"), nil
	}
}

// readSecret asks for a password at the prompt: without echo on the
// terminal, or as a literal line from a scripted reader.
func (r *REPL) readSecret(ctx context.Context, prompt string) (string, error) {
	if term.IsTerminal(int(os.Stdin.Fd())) {
		return terminalSecret(os.Stdin, r.Stdout, prompt)
	}
	line, err := r.Reader.ReadLine(ctx, LinePrompt{Text: prompt, Literal: true})
	if err != nil {
		return "", err
	}
	return line.Text, nil
}
