package daemon

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// sysStateCommands answer the questions automation asks before it
// configures a device (show sys mcp-state, show sys ready: is the
// configuration loaded, can it take changes) and the one operators ask
// after (show sys log ltm: what did the device say).
func sysStateCommands(e *Engine) []RuntimeCommand {
	return []RuntimeCommand{
		{"show", "sys mcp-state", func(_ context.Context, _ *Session, _, words []string, w io.Writer) error {
			ff, err := onlyFieldFmt("show sys mcp-state", words)
			if err != nil {
				return err
			}
			// ltmd answers only once the stored configuration is loaded
			// and in service: when it answers at all, it is running.
			if ff {
				_, err = fmt.Fprint(w, "sys mcp-state {\n    end-platform-id-received true\n    last-config-load-error none\n    phase running\n}\n")
				return err
			}
			_, err = fmt.Fprint(w, "\n----------------------------------------\nSys::mcp-state\n----------------------------------------\nRunning Phase                    running\nLast Configuration Load Status   success\nEnd Platform ID Received         true\n\n")
			return err
		}},
		{"show", "sys ready", func(_ context.Context, _ *Session, _, words []string, w io.Writer) error {
			ff, err := onlyFieldFmt("show sys ready", words)
			if err != nil {
				return err
			}
			if ff {
				_, err = fmt.Fprint(w, "sys ready {\n    config-ready yes\n    license-ready yes\n    provision-ready yes\n}\n")
				return err
			}
			_, err = fmt.Fprint(w, "\n----------------------------\nSys::System Readiness Status\n----------------------------\nLicense Ready        yes\nProvision Ready      yes\nConfiguration Ready  yes\n\n")
			return err
		}},
		{"show", "sys log", func(_ context.Context, _ *Session, _, words []string, w io.Writer) error {
			usage := []string{"show sys log ltm [lines N]"}
			if len(words) == 0 {
				return synErr(nil, usage, "show sys log needs the log: ltm")
			}
			if words[0] != "ltm" {
				return synErr(nil, usage, "openltm keeps the ltm log only (%q)", words[0])
			}
			n := 0 // all
			for rest := words[1:]; len(rest) > 0; rest = rest[2:] {
				if rest[0] != "lines" || len(rest) < 2 {
					return synErr(nil, usage, "%q unknown property", rest[0])
				}
				v, err := strconv.Atoi(rest[1])
				if err != nil || v < 1 {
					return synErr(nil, usage, "lines takes a number of lines, 1 or more (%q)", rest[1])
				}
				n = v
			}
			if e.logs != nil {
				e.logs.Sync()
			}
			lines, err := lastLines(filepath.Join(e.opts.StateDir, LogFile), n)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "Sys::Log: ltm (%s)\n", filepath.Join(e.opts.StateDir, LogFile))
			for _, l := range lines {
				fmt.Fprintln(w, l)
			}
			return nil
		}},
	}
}

// onlyFieldFmt reads the options of a show that takes none but field-fmt.
func onlyFieldFmt(cmd string, words []string) (bool, error) {
	for _, wd := range words {
		if wd != "field-fmt" {
			return false, synErr(nil, []string{cmd, cmd + " field-fmt"}, "%q unknown property", wd)
		}
	}
	return slices.Contains(words, "field-fmt"), nil
}

// lastLines reads the last n lines of a log file and of the file rotated
// before it when the current one has fewer (n 0: every line); a log not
// written yet has none.
func lastLines(path string, n int) ([]string, error) {
	var out []string
	for _, p := range []string{path, path + ".1"} {
		ls, err := readLines(p)
		if err != nil {
			return nil, err
		}
		out = append(ls, out...)
		if n > 0 && len(out) >= n {
			return out[len(out)-n:], nil
		}
	}
	return out, nil
}

func readLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out, sc.Err()
}
