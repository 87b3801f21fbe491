//go:build !linux

package synhdr

import "errors"

// Read gives nil off Linux: no other system keeps a listener's SYNs.
func Read(fd int) *SYN { return nil }

// SetSave fails off Linux, which alone has TCP_SAVE_SYN.
func SetSave(fd int, on bool) error {
	if !on {
		return nil
	}
	return errors.New("synhdr: TCP_SAVE_SYN is Linux's")
}

// SetMaxSeg does nothing off Linux.
func SetMaxSeg(fd, mss int) error { return nil }
