package l4

import (
	"github.com/openltm/openltm/dataplane/internal/rstcause"
	"golang.org/x/sys/unix"
)

// errnoCause is the cause of a loop flow's connect that failed at once.
func errnoCause(errno unix.Errno) rstcause.Cause {
	if errno == unix.ETIMEDOUT {
		return rstcause.ConnectTimeout
	}
	return rstcause.ConnectRefused
}
