package shell

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
)

// historyKeep is how many past lines are offered to Up-arrow at start.
const historyKeep = 1000

// history keeps the lines typed at the prompt in a file in the state
// directory, so Up-arrow reaches commands from earlier runs. A history that
// cannot be read or written is not worth failing the shell over: it is then
// simply not kept.
type history struct {
	path string
}

// load returns the last historyKeep lines, oldest first.
func (h *history) load() []string {
	f, err := os.Open(h.path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if l := sc.Text(); strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > historyKeep {
		lines = lines[len(lines)-historyKeep:]
	}
	return lines
}

// add appends one line. Lines are written as they are typed, so a killed
// shell keeps everything up to its last command.
func (h *history) add(line string) {
	if h == nil || h.path == "" || strings.TrimSpace(line) == "" || strings.ContainsAny(line, "\r\n") {
		return
	}
	if err := os.MkdirAll(filepath.Dir(h.path), 0o700); err != nil {
		return
	}
	f, err := os.OpenFile(h.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	f.WriteString(line + "\n")
}
