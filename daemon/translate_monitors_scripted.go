package daemon

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/openltm/openltm/dataplane"
)

// maxMonitorScript bounds a scripted monitor's script: a send/expect
// conversation is a few lines, and a file named by mistake (a log, a
// disk image) must not be read whole into every commit.
const maxMonitorScript = 64 << 10

// readMonitorScript reads and checks a scripted monitor's filename, so a
// missing or bad script refuses the change that sets it, with the file,
// line and column at fault. Choice [M]: filename is a path on the host
// ltmd runs on and must be absolute (BIG-IP keeps the file on its own
// disk; openltm has no sys file kind for scripts); the file is read at
// each commit, so an edited script takes effect with the next change
// (or `load sys config`), and a script broken in between keeps the
// monitor from running, with a warning.
func readMonitorScript(file string) (*dataplane.ScriptMonitor, error) {
	if !filepath.IsAbs(file) {
		return nil, fmt.Errorf("filename %q is not an absolute path (the send/expect script on this host, such as /config/monitors/smtp.script)", file)
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("filename: cannot read the script: %v", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxMonitorScript+1))
	if err != nil {
		return nil, fmt.Errorf("filename: cannot read the script: %v", err)
	}
	if len(b) > maxMonitorScript {
		return nil, fmt.Errorf("filename %s is larger than %d KiB; a scripted monitor's script is a few send and expect lines", file, maxMonitorScript>>10)
	}
	if err := dataplane.CheckMonitorScript(file, string(b)); err != nil {
		return nil, err
	}
	return &dataplane.ScriptMonitor{File: file, Text: string(b)}, nil
}
