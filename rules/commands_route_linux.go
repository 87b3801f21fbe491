package rules

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// The kernel's tcp_metrics generic netlink family (linux/tcp_metrics.h).
const (
	tcpmCmdGet = 1
	tcpmCmdDel = 2

	tcpmAttrAddrIPv4 = 1
	tcpmAttrAddrIPv6 = 2
	tcpmAttrAge      = 3
	tcpmAttrVals     = 6

	// Inside tcpmAttrVals: the metric index plus one.
	tcpmValRTT      = 1 // ms
	tcpmValRTTVar   = 2 // ms
	tcpmValCwnd     = 4
	tcpmValRTTUs    = 6
	tcpmValRTTVarUs = 7
)

// tcpmFamily is the family's id, looked up once.
var tcpmFamily struct {
	once sync.Once
	id   uint16
	err  error
}

// nlAttr appends one netlink attribute.
func nlAttr(b []byte, typ uint16, val []byte) []byte {
	l := 4 + len(val)
	b = binary.NativeEndian.AppendUint16(b, uint16(l))
	b = binary.NativeEndian.AppendUint16(b, typ)
	b = append(b, val...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// nlAttrs calls f with each attribute in b.
func nlAttrs(b []byte, f func(typ uint16, val []byte)) {
	for len(b) >= 4 {
		l := int(binary.NativeEndian.Uint16(b))
		if l < 4 || l > len(b) {
			return
		}
		f(binary.NativeEndian.Uint16(b[2:])&0x3fff, b[4:l])
		n := (l + 3) &^ 3
		if n > len(b) {
			return
		}
		b = b[n:]
	}
}

// genlRequest sends one generic netlink request and calls f with the
// payload (after the genl header) of each answer; an acknowledged
// request with no answer calls f never.
func genlRequest(family uint16, cmd uint8, flags uint16, attrs []byte, f func([]byte)) error {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_GENERIC)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	tv := unix.Timeval{Sec: 2}
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return err
	}
	msg := make([]byte, 16, 20+len(attrs))
	binary.NativeEndian.PutUint32(msg[0:], uint32(20+len(attrs)))
	binary.NativeEndian.PutUint16(msg[4:], family)
	binary.NativeEndian.PutUint16(msg[6:], unix.NLM_F_REQUEST|unix.NLM_F_ACK|flags)
	binary.NativeEndian.PutUint32(msg[8:], 1)
	msg = append(msg, cmd, 1, 0, 0)
	msg = append(msg, attrs...)
	if err := unix.Sendto(fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return err
	}
	buf := make([]byte, 32<<10)
	for range 1024 {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			return err
		}
		b := buf[:n]
		for len(b) >= 16 {
			l := int(binary.NativeEndian.Uint32(b))
			typ := binary.NativeEndian.Uint16(b[4:])
			if l < 16 || l > len(b) {
				return errors.New("malformed netlink answer")
			}
			body := b[16:l]
			switch typ {
			case unix.NLMSG_ERROR:
				if len(body) < 4 {
					return errors.New("malformed netlink error")
				}
				if e := int32(binary.NativeEndian.Uint32(body)); e != 0 {
					return unix.Errno(-e)
				}
				return nil
			case unix.NLMSG_DONE:
				return nil
			default:
				if len(body) >= 4 {
					f(body[4:])
				}
			}
			b = b[(l+3)&^3:]
		}
	}
	return errors.New("netlink answer too long")
}

// tcpmFamilyID looks up the tcp_metrics family.
func tcpmFamilyID() (uint16, error) {
	tcpmFamily.once.Do(func() {
		name := append([]byte("tcp_metrics"), 0)
		tcpmFamily.err = errors.New("the kernel has no tcp_metrics netlink family")
		err := genlRequest(unix.GENL_ID_CTRL, unix.CTRL_CMD_GETFAMILY, 0, nlAttr(nil, unix.CTRL_ATTR_FAMILY_NAME, name), func(p []byte) {
			nlAttrs(p, func(typ uint16, val []byte) {
				if typ == unix.CTRL_ATTR_FAMILY_ID && len(val) >= 2 {
					tcpmFamily.id, tcpmFamily.err = binary.NativeEndian.Uint16(val), nil
				}
			})
		})
		if err != nil {
			tcpmFamily.err = fmt.Errorf("looking up the tcp_metrics netlink family: %w", err)
		}
	})
	return tcpmFamily.id, tcpmFamily.err
}

// tcpmAddr is the destination attribute for dst.
func tcpmAddr(dst netip.Addr) []byte {
	if dst.Is4() {
		a := dst.As4()
		return nlAttr(nil, tcpmAttrAddrIPv4, a[:])
	}
	a := dst.As16()
	return nlAttr(nil, tcpmAttrAddrIPv6, a[:])
}

// routeLookup reads the kernel's entry for dst, from any source.
func routeLookup(dst netip.Addr) (routeMetrics, error) {
	var m routeMetrics
	id, err := tcpmFamilyID()
	if err != nil {
		return m, err
	}
	err = genlRequest(id, tcpmCmdGet, 0, tcpmAddr(dst), func(p []byte) {
		m.found = true
		var rttMs, rttvarMs uint32
		var haveUs, haveVarUs bool
		nlAttrs(p, func(typ uint16, val []byte) {
			switch typ {
			case tcpmAttrAge:
				if len(val) >= 8 {
					m.age = time.Duration(binary.NativeEndian.Uint64(val)) * time.Millisecond
				}
			case tcpmAttrVals:
				nlAttrs(val, func(typ uint16, val []byte) {
					if len(val) < 4 {
						return
					}
					v := binary.NativeEndian.Uint32(val)
					switch typ {
					case tcpmValRTTUs:
						m.rtt, haveUs = time.Duration(v)*time.Microsecond, true
					case tcpmValRTTVarUs:
						m.rttvar, haveVarUs = time.Duration(v)*time.Microsecond, true
					case tcpmValRTT:
						rttMs = v
					case tcpmValRTTVar:
						rttvarMs = v
					case tcpmValCwnd:
						m.cwnd = int(v)
					}
				})
			}
		})
		if !haveUs {
			m.rtt = time.Duration(rttMs) * time.Millisecond
		}
		if !haveVarUs {
			m.rttvar = time.Duration(rttvarMs) * time.Millisecond
		}
	})
	if errors.Is(err, unix.ESRCH) {
		return routeMetrics{}, nil // no entry
	}
	return m, err
}

// routeDelete removes every entry for dst.
func routeDelete(dst netip.Addr) error {
	id, err := tcpmFamilyID()
	if err != nil {
		return err
	}
	err = genlRequest(id, tcpmCmdDel, 0, tcpmAddr(dst), func([]byte) {})
	if errors.Is(err, unix.ESRCH) {
		return nil
	}
	return err
}
