//go:build unix

package monitor

import (
	"os/exec"
	"syscall"
)

// setGroup starts the program in its own process group, so a timeout can
// kill everything it started.
func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
