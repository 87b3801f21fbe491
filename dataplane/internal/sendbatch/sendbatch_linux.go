//go:build linux

package sendbatch

import (
	"errors"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The io_uring ABI (include/uapi/linux/io_uring.h): only what a batch of
// socket sends needs.
const (
	opSendmsg = 9
	opSend    = 26

	setupSubmitAll = 1 << 7 // keep submitting past a request that fails
	featSingleMmap = 1 << 0

	enterGetEvents = 1 << 0

	offSQRing = 0
	offCQRing = 0x8000000
	offSQEs   = 0x10000000

	sqeSize = 64
	cqeSize = 16
)

type sqringOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

type cqringOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

type params struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFD uint32
	resv                                                                   [3]uint32
	sqOff                                                                  sqringOffsets
	cqOff                                                                  cqringOffsets
}

// sqe is one submission entry, laid out as struct io_uring_sqe.
type sqe struct {
	opcode   uint8
	flags    uint8
	ioprio   uint16
	fd       int32
	off      uint64
	addr     uint64
	len      uint32
	msgFlags uint32
	userData uint64
	bufIndex uint16
	persona  uint16
	spliceFD int32
	addr3    uint64
	pad      uint64
}

type cqe struct {
	userData uint64
	res      int32
	flags    uint32
}

// Batch is one event loop's ring. Not safe for concurrent use: its loop
// alone adds and submits.
type Batch struct {
	fd     int
	single bool // one mapping holds both rings

	sqRing, cqRing, sqeMem []byte
	sqHead, sqTail         *uint32
	sqMask                 uint32
	sqArray                []uint32
	sqes                   []sqe
	cqHead, cqTail         *uint32
	cqMask                 uint32
	cqes                   []cqe

	// The staged sends: their sockets and buffers, the message headers
	// the kernel reads while the batch is submitted, and the results.
	fds  []int
	iovs [][]unix.Iovec
	msgs []unix.Msghdr
	res  []Result
	n    int
	// broken: io_uring_enter(2) failed for another reason than a
	// signal or a full completion queue; the batch takes no more sends
	// (Add), and its owner writes them itself (SendNow).
	broken bool
}

// Result is the outcome of one staged send: the bytes the socket took,
// or the error (syscall.EAGAIN when it took none).
type Result struct {
	N   int
	Err syscall.Errno
}

// Supported reports whether the kernel gives this process rings (Linux
// 5.18 or later, io_uring not disabled): what decides, once, whether the
// loops batch their sends or write one by one.
func Supported() bool {
	supportOnce.Do(func() {
		if b, err := New(2); err == nil {
			supported = true
			b.Close()
		}
	})
	return supported
}

var (
	supportOnce sync.Once
	supported   bool
)

// New makes a ring for batches of up to size sends (a power of two).
func New(size int) (*Batch, error) {
	if size < 1 || size&(size-1) != 0 {
		return nil, errors.New("sendbatch: size must be a power of two")
	}
	var p params
	p.flags = setupSubmitAll
	r, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(size), uintptr(unsafe.Pointer(&p)), 0)
	if e != 0 {
		return nil, e
	}
	b := &Batch{fd: int(r)}
	if err := b.mmap(&p); err != nil {
		b.Close()
		return nil, err
	}
	b.fds = make([]int, p.sqEntries)
	b.iovs = make([][]unix.Iovec, p.sqEntries)
	b.msgs = make([]unix.Msghdr, p.sqEntries)
	b.res = make([]Result, p.sqEntries)
	return b, nil
}

func (b *Batch) mmap(p *params) error {
	sqSize := int(p.sqOff.array + p.sqEntries*4)
	cqSize := int(p.cqOff.cqes + p.cqEntries*cqeSize)
	b.single = p.features&featSingleMmap != 0
	if b.single {
		sqSize = max(sqSize, cqSize)
	}
	prot, flags := unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE
	var err error
	if b.sqRing, err = unix.Mmap(b.fd, offSQRing, sqSize, prot, flags); err != nil {
		return err
	}
	if b.single {
		b.cqRing = b.sqRing
	} else if b.cqRing, err = unix.Mmap(b.fd, offCQRing, cqSize, prot, flags); err != nil {
		return err
	}
	if b.sqeMem, err = unix.Mmap(b.fd, offSQEs, int(p.sqEntries)*sqeSize, prot, flags); err != nil {
		return err
	}
	sq, cq := unsafe.Pointer(&b.sqRing[0]), unsafe.Pointer(&b.cqRing[0])
	b.sqHead = (*uint32)(unsafe.Add(sq, p.sqOff.head))
	b.sqTail = (*uint32)(unsafe.Add(sq, p.sqOff.tail))
	b.sqMask = *(*uint32)(unsafe.Add(sq, p.sqOff.ringMask))
	b.sqArray = unsafe.Slice((*uint32)(unsafe.Add(sq, p.sqOff.array)), p.sqEntries)
	b.sqes = unsafe.Slice((*sqe)(unsafe.Pointer(&b.sqeMem[0])), p.sqEntries)
	b.cqHead = (*uint32)(unsafe.Add(cq, p.cqOff.head))
	b.cqTail = (*uint32)(unsafe.Add(cq, p.cqOff.tail))
	b.cqMask = *(*uint32)(unsafe.Add(cq, p.cqOff.ringMask))
	b.cqes = unsafe.Slice((*cqe)(unsafe.Add(cq, p.cqOff.cqes)), p.cqEntries)
	return nil
}

// Close releases the ring.
func (b *Batch) Close() {
	if b.sqeMem != nil {
		unix.Munmap(b.sqeMem)
	}
	if b.cqRing != nil && !b.single {
		unix.Munmap(b.cqRing)
	}
	if b.sqRing != nil {
		unix.Munmap(b.sqRing)
	}
	b.sqeMem, b.cqRing, b.sqRing = nil, nil, nil
	if b.fd >= 0 {
		unix.Close(b.fd)
		b.fd = -1
	}
}

// Cap is how many sends one Submit carries.
func (b *Batch) Cap() int { return len(b.sqes) }

// Len is how many sends are staged.
func (b *Batch) Len() int { return b.n }

// Add stages a send of the buffers iov points to on fd, whose result
// comes in the order of the Adds from the next Submit; false when the
// batch is full (Cap), iov is empty or the ring is broken (the caller
// then writes with SendNow). The buffers must stay as they are until
// Submit returns.
func (b *Batch) Add(fd int, iov []unix.Iovec) bool {
	if b.n == len(b.sqes) || len(iov) == 0 || b.broken {
		return false
	}
	i := b.n
	b.fds[i], b.iovs[i] = fd, iov
	idx := (atomic.LoadUint32(b.sqTail) + uint32(i)) & b.sqMask
	s := &b.sqes[idx]
	*s = sqe{fd: int32(fd), msgFlags: unix.MSG_NOSIGNAL | unix.MSG_DONTWAIT, userData: uint64(i)}
	if len(iov) == 1 {
		s.opcode = opSend
		s.addr = uint64(uintptr(unsafe.Pointer(iov[0].Base)))
		s.len = uint32(iov[0].Len)
	} else {
		m := &b.msgs[i]
		*m = unix.Msghdr{Iov: &iov[0]}
		m.SetIovlen(len(iov))
		s.opcode = opSendmsg
		s.addr = uint64(uintptr(unsafe.Pointer(m)))
		s.len = 1
	}
	b.sqArray[idx] = idx
	b.n++
	return true
}

// Submit sends every staged send with one io_uring_enter(2), in the order
// they were added, and returns their results (valid until the next Add).
// Why one call: the sends of a loop's batch then leave before any peer
// they wake can take the CPU from the loop, and the loop pays one system
// call's entry and exit instead of one per socket.
func (b *Batch) Submit() []Result {
	n := b.n
	if n == 0 {
		return nil
	}
	if n == 1 {
		// Nothing to batch: the ring would only add its own work.
		b.res[0] = SendNow(b.fds[0], b.iovs[0])
		b.iovs[0] = nil
		b.n = 0
		return b.res[:1]
	}
	head0 := atomic.LoadUint32(b.sqHead)
	atomic.StoreUint32(b.sqTail, atomic.LoadUint32(b.sqTail)+uint32(n))
	got := 0
	for got < n {
		submitted := int(atomic.LoadUint32(b.sqHead) - head0)
		toSubmit := n - submitted
		_, _, e := unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(b.fd), uintptr(toSubmit),
			uintptr(n-got), enterGetEvents, 0, 0)
		got += b.reap()
		if e != 0 && e != syscall.EINTR && e != syscall.EAGAIN && e != syscall.EBUSY {
			// The ring is broken (not seen; the kernel documents none
			// of these for valid arguments): what did not complete is
			// failed, as a failed write, and the batch is not used
			// again.
			b.broken = true
			for i := got; i < n; i++ {
				b.res[i] = Result{Err: e}
			}
			break
		}
	}
	clear(b.msgs[:n])
	clear(b.iovs[:n])
	b.n = 0
	return b.res[:n]
}

// reap takes the completions that are there and returns how many.
func (b *Batch) reap() int {
	head := atomic.LoadUint32(b.cqHead)
	tail := atomic.LoadUint32(b.cqTail)
	k := 0
	for ; head != tail; head++ {
		c := &b.cqes[head&b.cqMask]
		if i := int(c.userData); i < len(b.res) {
			if c.res < 0 {
				b.res[i] = Result{Err: syscall.Errno(-c.res)}
			} else {
				b.res[i] = Result{N: int(c.res)}
			}
		}
		k++
	}
	atomic.StoreUint32(b.cqHead, head)
	return k
}

// SendNow writes the buffers iov points to on fd with one send(2) or
// sendmsg(2), as a staged send would be written: what a loop does with a
// write its batch cannot take, and the one write of a loop that does not
// batch. The socket calls rather than write(2) and writev(2): they skip
// the file layer (rawsock.Read says why).
func SendNow(fd int, iov []unix.Iovec) Result {
	if len(iov) == 0 {
		return Result{}
	}
	var m unix.Msghdr
	m.Iov = &iov[0]
	m.SetIovlen(len(iov))
	for {
		var r uintptr
		var e syscall.Errno
		if len(iov) == 1 {
			r, _, e = unix.RawSyscall6(unix.SYS_SENDTO, uintptr(fd), uintptr(unsafe.Pointer(iov[0].Base)), uintptr(iov[0].Len), unix.MSG_NOSIGNAL|unix.MSG_DONTWAIT, 0, 0)
		} else {
			r, _, e = unix.RawSyscall(unix.SYS_SENDMSG, uintptr(fd), uintptr(unsafe.Pointer(&m)), unix.MSG_NOSIGNAL|unix.MSG_DONTWAIT)
		}
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			return Result{Err: e}
		}
		return Result{N: int(r)}
	}
}
