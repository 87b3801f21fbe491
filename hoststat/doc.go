// Package hoststat reads what the host itself can tell about its memory,
// processors, network interfaces and routes, for the shows BIG-IP answers
// from its own hardware (show sys memory, cpu, hardware, show net
// interface, route). openltm runs on an ordinary Linux host, so the true
// figures are the kernel's: each reader is a pure Parse function over the
// bytes of a /proc file, tested with fixed texts, and a thin Read
// function that hands it the real file. CPUMeter is ltmd's own load, for
// the data path's decisions that depend on it (the http-compression
// profile's CPU saver); its readings can be handed in by a test.
package hoststat

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
)

// procRoot is where the readers find /proc; tests of the Read functions
// may point it elsewhere.
var procRoot = "/proc"

func readProc(name string) ([]byte, error) { return os.ReadFile(procRoot + "/" + name) }

// lines calls fn for each line of b, without its end.
func lines(b []byte, fn func(line string)) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		fn(sc.Text())
	}
}

// keyValue splits "Key:   value" at its first colon, both sides trimmed.
func keyValue(line string) (string, string, bool) {
	k, v, ok := strings.Cut(line, ":")
	return strings.TrimSpace(k), strings.TrimSpace(v), ok
}

func parseUint(s string) (uint64, error) { return strconv.ParseUint(s, 10, 64) }
