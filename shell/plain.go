package shell

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
)

// plainReader is the LineReader of last resort: a prompt and a line read,
// with the terminal's own line editing. It serves a terminal go-prompt
// cannot drive.
type plainReader struct {
	in    io.Reader
	out   io.Writer
	lines chan plainLine
}

type plainLine struct {
	text string
	err  error
}

// ReadLine implements LineReader.
func (r *plainReader) ReadLine(ctx context.Context, p LinePrompt) (Line, error) {
	if r.lines == nil {
		r.lines = make(chan plainLine)
		go func() {
			br := bufio.NewReader(r.in)
			for {
				s, err := br.ReadString('\n')
				if s != "" {
					r.lines <- plainLine{text: strings.TrimRight(s, "\r\n")}
				}
				if err != nil {
					r.lines <- plainLine{err: io.EOF}
					return
				}
			}
		}()
	}
	fmt.Fprint(r.out, p.Text)
	select {
	case l := <-r.lines:
		if l.err != nil {
			fmt.Fprintln(r.out)
			// A terminal can be read again after Ctrl-D (the end of a
			// configuration read from it): the next read starts anew.
			r.lines = nil
			return Line{}, l.err
		}
		return Line{Text: l.text}, nil
	case <-ctx.Done():
		return Line{}, ctx.Err()
	}
}
