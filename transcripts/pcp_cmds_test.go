package transcripts

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// pcpResults are RFC 6887's result codes by number.
var pcpResults = []string{"SUCCESS", "UNSUPP_VERSION", "NOT_AUTHORIZED", "MALFORMED_REQUEST", "UNSUPP_OPCODE",
	"UNSUPP_OPTION", "MALFORMED_OPTION", "NETWORK_FAILURE", "NO_RESOURCES", "UNSUPP_PROTOCOL",
	"USER_EX_QUOTA", "CANNOT_PROVIDE_EXTERNAL", "ADDRESS_MISMATCH", "EXCESSIVE_REMOTE_PEERS"}

// cmdPCPClient is a PCP client (RFC 6887; Debian has none): it sends
// one MAP, PEER or ANNOUNCE request from FROM to the server and prints
// the answer's result, lifetime and external address and port; -set
// NAME puts the external address and port in $NAME, -version asks in
// another version, -nonce gives the mapping nonce's first octet.
//
//	pcpclient [-set NAME] [-version N] [-nonce N] FROM SERVER map tcp|udp PORT LIFETIME
//	pcpclient ... FROM SERVER peer tcp|udp PORT LIFETIME PEER-ADDR:PORT
//	pcpclient ... FROM SERVER announce
func cmdPCPClient(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! pcpclient")
	}
	set, version, nonce := "", 2, 1
	for len(args) > 1 && args[0][0] == '-' {
		switch args[0] {
		case "-set":
			set = args[1]
		case "-version":
			version, _ = strconv.Atoi(args[1])
		case "-nonce":
			nonce, _ = strconv.Atoi(args[1])
		default:
			ts.Fatalf("pcpclient: unknown option %s", args[0])
		}
		args = args[2:]
	}
	usage := "usage: pcpclient [-set NAME] [-version N] [-nonce N] FROM SERVER map|peer|announce [tcp|udp PORT LIFETIME [PEER]]"
	if len(args) < 3 {
		ts.Fatalf("%s", usage)
	}
	from := netip.MustParseAddr(args[0])
	server, err := netip.ParseAddrPort(args[1])
	ts.Check(err)
	b := make([]byte, 24)
	b[0] = byte(version)
	put := func(p []byte, a netip.Addr) {
		x := a.As16()
		copy(p, x[:])
	}
	put(b[8:24], from)
	switch args[2] {
	case "announce":
	case "map", "peer":
		if len(args) < 6 || args[2] == "peer" && len(args) < 7 {
			ts.Fatalf("%s", usage)
		}
		b[1] = 1
		n := 36
		if args[2] == "peer" {
			b[1], n = 2, 56
		}
		life, _ := strconv.Atoi(args[5])
		binary.BigEndian.PutUint32(b[4:], uint32(life))
		p := make([]byte, n)
		p[0] = byte(nonce)
		p[12] = 6
		if args[3] == "udp" {
			p[12] = 17
		}
		port, _ := strconv.Atoi(args[4])
		binary.BigEndian.PutUint16(p[16:], uint16(port))
		put(p[20:36], netip.IPv4Unspecified())
		if args[2] == "peer" {
			peer, err := netip.ParseAddrPort(args[6])
			ts.Check(err)
			binary.BigEndian.PutUint16(p[36:], peer.Port())
			put(p[40:56], peer.Addr())
		}
		b = append(b, p...)
	default:
		ts.Fatalf("%s", usage)
	}
	c, err := net.DialUDP("udp", &net.UDPAddr{IP: from.AsSlice()}, net.UDPAddrFromAddrPort(server))
	ts.Check(err)
	defer c.Close()
	buf := make([]byte, 1100)
	for try := 0; try < 10; try++ { // retransmitted, as PCP clients do
		c.Write(b)
		c.SetReadDeadline(time.Now().Add(time.Second))
		n, err := c.Read(buf)
		if err != nil || n < 24 {
			continue
		}
		res := "UNKNOWN"
		if int(buf[3]) < len(pcpResults) {
			res = pcpResults[buf[3]]
		}
		line := fmt.Sprintf("result=%d %s lifetime=%d", buf[3], res, binary.BigEndian.Uint32(buf[4:]))
		if n >= 60 && (buf[1]&0x7f == 1 || buf[1]&0x7f == 2) {
			ext := netip.AddrPortFrom(netip.AddrFrom16([16]byte(buf[44:60])).Unmap(), binary.BigEndian.Uint16(buf[42:]))
			line += " external=" + ext.String()
			if set != "" {
				ts.Setenv(set, ext.String())
			}
		}
		fmt.Fprintln(ts.Stdout(), line)
		return
	}
	ts.Fatalf("pcpclient: no answer from %s", server)
}
