package sflow

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// PacketSampler samples the frames of a VLAN's interfaces: one packet
// socket per interface (AF_PACKET, every protocol, both directions)
// whose classic BPF program keeps one frame in rate at random (the
// kernel's random number, modulo rate) and only its first MaxHeader
// bytes, so the kernel copies nothing else out. Each kept frame becomes
// a flow sample of source id through the agent. sample_pool is the
// frames the sampler stood for (samples times rate) [M: the kernel does
// not tell how many frames the filter passed over]; drops are the
// frames the socket had no room for (PACKET_STATISTICS).
type PacketSampler struct {
	agent *Agent
	id    uint32
	rate  uint32
	fds   []int
	stop  atomic.Bool
	wg    sync.WaitGroup
	seq   atomic.Uint32
	// Samples counts the frames sampled.
	Samples atomic.Uint64
}

// skfRandom is the classic BPF load of the kernel's random number
// (SKF_AD_OFF + SKF_AD_RANDOM, linux/filter.h: -0x1000 + 56).
const skfRandom = 0xfffff000 + 56

// sampleProgram is the filter keeping one frame in rate, MaxHeader bytes
// of it.
func sampleProgram(rate uint32) []unix.SockFilter {
	return []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: skfRandom},
		{Code: unix.BPF_ALU | unix.BPF_MOD | unix.BPF_K, K: rate},
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: 0, Jt: 0, Jf: 1},
		{Code: unix.BPF_RET | unix.BPF_K, K: MaxHeader},
		{Code: unix.BPF_RET | unix.BPF_K, K: 0},
	}
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// StartPacketSampler samples the frames of ifaces (Linux interface
// names) one in rate, as flow samples of source id sent by a. It needs
// CAP_NET_RAW; an interface that does not exist is an error.
func StartPacketSampler(a *Agent, id, rate uint32, ifaces []string) (*PacketSampler, error) {
	if rate == 0 {
		return nil, errors.New("sflow: a sampling rate of 0 samples nothing")
	}
	s := &PacketSampler{agent: a, id: id, rate: rate}
	prog := sampleProgram(rate)
	for _, name := range ifaces {
		ifc, err := net.InterfaceByName(name)
		if err != nil {
			s.Close()
			return nil, err
		}
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, int(htons(unix.ETH_P_ALL)))
		if err != nil {
			s.Close()
			return nil, err
		}
		s.fds = append(s.fds, fd)
		// The filter first, so that no frame is queued unfiltered.
		if err := unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}); err != nil {
			s.Close()
			return nil, err
		}
		// Reads wake every half second to see whether to stop: a
		// packet socket's blocked read does not end when it is closed.
		if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Usec: 500000}); err != nil {
			s.Close()
			return nil, err
		}
		if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifc.Index}); err != nil {
			s.Close()
			return nil, err
		}
	}
	for i, fd := range s.fds {
		ifc, _ := net.InterfaceByName(ifaces[i])
		s.wg.Add(1)
		go s.read(fd, uint32(ifc.Index))
	}
	return s, nil
}

// read turns fd's frames into samples until Close.
func (s *PacketSampler) read(fd int, ifindex uint32) {
	defer s.wg.Done()
	buf := make([]byte, MaxHeader)
	for !s.stop.Load() {
		// MSG_TRUNC: the frame's whole length, though only the
		// filter's MaxHeader bytes were kept.
		n, from, err := unix.Recvfrom(fd, buf, unix.MSG_TRUNC)
		if err != nil {
			if err == unix.EAGAIN || err == unix.EINTR {
				continue
			}
			return
		}
		ps := PacketSample{Header: buf[:min(n, len(buf))], FrameLength: uint32(n), Rate: s.rate}
		if ll, ok := from.(*unix.SockaddrLinklayer); ok && ll.Pkttype == unix.PACKET_OUTGOING {
			ps.Output = ifindex
		} else {
			ps.Input = ifindex
		}
		if st, err := unix.GetsockoptTpacketStats(fd, unix.SOL_PACKET, unix.PACKET_STATISTICS); err == nil {
			ps.Drops = st.Drops // since the last read of the statistics
		}
		ps.Seq = s.seq.Add(1)
		ps.Pool = ps.Seq * s.rate
		s.Samples.Add(1)
		s.agent.AddPacket(s.id, &ps)
	}
}

// Close stops the sampler and closes its sockets.
func (s *PacketSampler) Close() {
	if s == nil {
		return
	}
	s.stop.Store(true)
	s.wg.Wait()
	for _, fd := range s.fds {
		unix.Close(fd)
	}
	s.fds = nil
}
