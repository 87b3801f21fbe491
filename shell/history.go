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
	if total := len(lines); total == historyKeep {
		h.compact(lines)
	}
	return lines
}

// compact rewrites the file with only the lines kept, so it does not grow
// without bound; it does so only when the file is well over the limit.
func (h *history) compact(lines []string) {
	fi, err := os.Stat(h.path)
	if err != nil {
		return
	}
	size := 0
	for _, l := range lines {
		size += len(l) + 1
	}
	if fi.Size() < int64(2*size) {
		return
	}
	tmp := h.path + ".new"
	if err := os.WriteFile(tmp, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		return
	}
	if err := os.Rename(tmp, h.path); err != nil {
		os.Remove(tmp)
	}
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
