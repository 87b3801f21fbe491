package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
)

// The SIP tools: a member that answers like a user agent server, and a
// client that places calls and pings, so a SIP virtual can be shown
// balancing each message and keeping a dialog on one member.

// readSIPMessage reads one SIP message from r, keep-alive CRLFs skipped.
func readSIPMessage(r *bufio.Reader) ([]byte, error) {
	f := &mblb.SIPFramer{Max: 1 << 20}
	var buf []byte
	for {
		if len(buf) > 0 {
			n, ok, err := f.Frame(buf)
			if err != nil {
				return nil, err
			}
			if ok {
				if mblb.IsSIPKeepAlive(buf[:n]) {
					buf = buf[n:]
					continue
				}
				return buf[:n], nil
			}
		}
		b, err := r.ReadByte()
		if err != nil {
			return nil, err
		}
		buf = append(buf, b)
	}
}

func sipField(m *mblb.SIPMessage, name string) string {
	v, _ := m.Header(mblb.NewSIPField(name))
	return string(v)
}

// sipFields is every value of a header field, in order.
func sipFields(m *mblb.SIPMessage, name string) []string {
	f := mblb.NewSIPField(name)
	var out []string
	for i := 0; i < 100; i++ {
		v, ok := m.HeaderAt(f, i)
		if !ok {
			break
		}
		out = append(out, string(v))
	}
	return out
}

// sipRouteFields prints a message's Via, Record-Route and Route fields,
// one a line, so a transcript can check what a proxy inserted or
// removed.
func sipRouteFields(w io.Writer, m *mblb.SIPMessage) {
	for _, name := range []string{"Via", "Record-Route", "Route"} {
		for _, v := range sipFields(m, name) {
			fmt.Fprintf(w, "  %s: %s\n", name, v)
		}
	}
}

// sipShowFields prints the fields names (comma-separated) of m holds.
func sipShowFields(w io.Writer, m *mblb.SIPMessage, names string) {
	if names == "" {
		return
	}
	for _, n := range strings.Split(names, ",") {
		for _, v := range sipFields(m, strings.TrimSpace(n)) {
			fmt.Fprintf(w, "  %s: %s\n", strings.TrimSpace(n), v)
		}
	}
}

// sipServerMain is `tcpkit sip-server`: INVITE gets 100 Trying and 200
// OK with an SDP body, ACK nothing, any other request 200 OK; every
// answer names the member (X-Member) and echoes the request's X-Tag.
func sipServerMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sip-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "", "address:port to listen on")
	label := fs.String("label", "S1", "the member's name in its answers (X-Member)")
	quiet := fs.Bool("quiet", false, "do not log each request")
	udp := fs.Bool("udp", false, "SIP over UDP: one message per datagram")
	headers := fs.Bool("headers", false, "log each request's Via, Record-Route and Route fields too")
	show := fs.String("show", "", "log these fields of each request too (comma-separated names)")
	body := fs.Bool("body", false, "log each request's body too, a line at a time")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *listen == "" {
		return errors.New("sip-server: -listen is required")
	}
	var mu sync.Mutex // one log line at a time
	logMsg := func(m *mblb.SIPMessage, from net.Addr) {
		if *quiet {
			return
		}
		mu.Lock()
		if m.Request {
			fmt.Fprintf(stdout, "%s got %s Call-ID %s from %s\n", *label, m.Method, sipField(m, "call-id"), from)
			if *headers {
				sipRouteFields(stdout, m)
			}
			sipShowFields(stdout, m, *show)
			if *body {
				for _, l := range strings.Split(strings.TrimRight(string(m.Body()), "\r\n"), "\n") {
					if l = strings.TrimRight(l, "\r"); l != "" {
						fmt.Fprintf(stdout, "  body: %s\n", l)
					}
				}
			}
		} else {
			fmt.Fprintf(stdout, "%s got response %d Call-ID %s\n", *label, m.Code, sipField(m, "call-id"))
		}
		mu.Unlock()
	}
	if *udp {
		pc, err := net.ListenPacket("udp", *listen)
		if err != nil {
			return err
		}
		go func() { <-ctx.Done(); pc.Close() }()
		buf := make([]byte, 65535)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			m, err := mblb.ParseSIP(buf[:n])
			if err != nil {
				continue
			}
			logMsg(&m, from)
			for _, out := range sipAnswers(&m, *label) {
				pc.WriteTo(out, from)
			}
		}
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	go func() { <-ctx.Done(); ln.Close() }()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		go func() {
			defer c.Close()
			r := bufio.NewReader(c)
			for {
				b, err := readSIPMessage(r)
				if err != nil {
					return
				}
				m, err := mblb.ParseSIP(b)
				if err != nil {
					return
				}
				logMsg(&m, c.RemoteAddr())
				for _, out := range sipAnswers(&m, *label) {
					if _, err := c.Write(out); err != nil {
						return
					}
				}
			}
		}()
	}
}

// sipAnswers are a member's answers to m: none to an ACK or a
// response, 100 and 200 (with SDP) to an INVITE, 200 to the others.
func sipAnswers(m *mblb.SIPMessage, label string) [][]byte {
	if !m.Request || string(m.Method) == "ACK" {
		return nil
	}
	if string(m.Method) == "INVITE" {
		return [][]byte{sipResponse(m, 100, "Trying", label, ""), sipResponse(m, 200, "OK", label, "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\n")}
	}
	return [][]byte{sipResponse(m, 200, "OK", label, "")}
}

// sipResponse answers m with its Via fields (all, in order, as RFC 3261
// §8.2.6.2 says), its Record-Route fields (§12.1.1), From, To (given a
// tag), Call-ID and CSeq, the member's name, the request's X-Tag if any,
// and a body.
func sipResponse(m *mblb.SIPMessage, code int, reason, label, body string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "SIP/2.0 %d %s\r\n", code, reason)
	for _, v := range sipFields(m, "via") {
		fmt.Fprintf(&b, "Via: %s\r\n", v)
	}
	for _, v := range sipFields(m, "record-route") {
		fmt.Fprintf(&b, "Record-Route: %s\r\n", v)
	}
	fmt.Fprintf(&b, "From: %s\r\nTo: %s", sipField(m, "from"), sipField(m, "to"))
	if !strings.Contains(sipField(m, "to"), "tag=") {
		fmt.Fprintf(&b, ";tag=%s", label)
	}
	fmt.Fprintf(&b, "\r\nCall-ID: %s\r\nCSeq: %s\r\nX-Member: %s\r\n", sipField(m, "call-id"), sipField(m, "cseq"), label)
	if t := sipField(m, "x-tag"); t != "" {
		fmt.Fprintf(&b, "X-Tag: %s\r\n", t)
	}
	if body != "" {
		b.WriteString("Content-Type: application/sdp\r\n")
	}
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", len(body), body)
	return []byte(b.String())
}

// sipClientMain is `tcpkit sip-client`: on one connection it places
// -calls dialogs (INVITE with SDP, its answers, ACK, BYE) and sends
// -options OPTIONS pings, printing which member answered each.
func sipClientMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sip-client", flag.ContinueOnError)
	fs.SetOutput(stderr)
	connect := fs.String("connect", "", "the virtual server's address:port")
	label := fs.String("label", "C1", "the client's name, the start of its Call-IDs")
	calls := fs.Int("calls", 1, "dialogs to place: INVITE, ACK, BYE each")
	options := fs.Int("options", 0, "OPTIONS requests to send, each of its own Call-ID")
	optMethod := fs.String("options-method", "OPTIONS", "the method of the -options requests (another, or one SIP does not define, to see how it is handled)")
	info := fs.Int("info", 0, "INFO requests each dialog sends between its ACK and its BYE")
	register := fs.Int("register", 0, "REGISTER requests to send first, each for an address of record of its own (LABEL-user-N)")
	registrations := fs.String("registrations", "", "REGISTER requests to send after -register's, in order: user[=seconds],... (the Contact's expires parameter; without one, Expires: 60)")
	compact := fs.Bool("compact", false, "use the compact header forms (v, f, t, i, l)")
	tag := fs.String("tag", "", "an X-Tag header for every request (members echo it)")
	summary := fs.Bool("summary", false, "print one line per dialog and a count per member instead of every answer")
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for each answer")
	udp := fs.Bool("udp", false, "SIP over UDP: one message per datagram")
	headers := fs.Bool("headers", false, "print each answer's Via and Record-Route fields too")
	waitClose := fs.Bool("wait-close", false, "at the end, wait for the virtual to close the connection and say so")
	callee := fs.String("user", "service", "the user called: the Request-URI's and To's (sip:USER@ADDR)")
	maxFwd := fs.Int("max-forwards", 70, "the requests' Max-Forwards")
	route := fs.String("route", "", "a Route field for every request (its value, as written)")
	media := fs.String("media", "", "an m= line for the INVITEs' session descriptions (e.g. \"audio 49170 RTP/AVP 0\"), with a c= line of the client's address")
	showFields := fs.String("show", "", "print these fields of each answer too (comma-separated names)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *connect == "" {
		return errors.New("sip-client: -connect is required")
	}
	if *calls < 0 || *calls > 10000 || *options < 0 || *options > 10000 || *info < 0 || *info > 10000 || *register < 0 || *register > 10000 {
		return errors.New("sip-client: -calls, -options, -info and -register must be 0 to 10000")
	}
	network := "tcp"
	if *udp {
		network = "udp"
	}
	c, err := net.DialTimeout(network, *connect, *timeout)
	if err != nil {
		return err
	}
	defer c.Close()
	go func() { <-ctx.Done(); c.Close() }()
	r := bufio.NewReader(c)
	local := c.LocalAddr().String()
	names := map[bool][4]string{false: {"Via", "From", "To", "Call-ID"}, true: {"v", "f", "t", "i"}}[*compact]
	cl := "Content-Length"
	if *compact {
		cl = "l"
	}
	n := 0
	request := func(method, callID string, cseq int, body string) string {
		n++
		var b strings.Builder
		fmt.Fprintf(&b, "%s sip:%s@%s SIP/2.0\r\n%s: SIP/2.0/"+strings.ToUpper(network)+" %s;branch=z9hG4bK-%s-%d\r\nMax-Forwards: %d\r\n%s: <sip:%s@%s>;tag=%s\r\n%s: <sip:%s@%s>\r\n%s: %s\r\nCSeq: %d %s\r\n",
			method, *callee, *connect, names[0], local, *label, n, *maxFwd, names[1], *label, local, *label, names[2], *callee, *connect, names[3], callID, cseq, method)
		if *tag != "" {
			fmt.Fprintf(&b, "X-Tag: %s\r\n", *tag)
		}
		if *route != "" {
			fmt.Fprintf(&b, "Route: %s\r\n", *route)
		}
		if body != "" {
			b.WriteString("Content-Type: application/sdp\r\n")
		}
		fmt.Fprintf(&b, "%s: %d\r\n\r\n%s", cl, len(body), body)
		return b.String()
	}
	dgram := make([]byte, 65535)
	recv := func() (*mblb.SIPMessage, error) {
		c.SetReadDeadline(time.Now().Add(*timeout))
		if *udp {
			n, err := c.Read(dgram)
			if err != nil {
				return nil, err
			}
			m, err := mblb.ParseSIP(append([]byte(nil), dgram[:n]...))
			return &m, err
		}
		b, err := readSIPMessage(r)
		if err != nil {
			return nil, err
		}
		m, err := mblb.ParseSIP(append([]byte(nil), b...))
		return &m, err
	}
	send := func(s string) error {
		c.SetWriteDeadline(time.Now().Add(*timeout))
		_, err := io.WriteString(c, s)
		return err
	}
	perMember := map[string]int{}
	show := func(method, callID string, m *mblb.SIPMessage) {
		who := sipField(m, "x-member")
		if who == "" {
			who = "(no member)" // the virtual answered itself
		}
		perMember[who]++
		if !*summary {
			extra := ""
			if t := sipField(m, "x-tag"); t != "" {
				extra = " X-Tag " + t
			}
			fmt.Fprintf(stdout, "%s %s %s -> %d %s%s\n", *label, method, callID, m.Code, who, extra)
			if *headers {
				sipRouteFields(stdout, m)
			}
			sipShowFields(stdout, m, *showFields)
		}
	}
	for i := 1; i <= *register; i++ {
		user := fmt.Sprintf("%s-user-%d", *label, i)
		reg := request("REGISTER", user, 1, "")
		reg = strings.Replace(reg, "<sip:"+*callee+"@"+*connect+">", "<sip:"+user+"@"+*connect+">", 1)
		reg = strings.Replace(reg, "\r\nCSeq:", "\r\nContact: <sip:"+user+"@"+local+">\r\nExpires: 60\r\nCSeq:", 1)
		if err := send(reg); err != nil {
			return err
		}
		m, err := recv()
		for err == nil && m.Code < 200 {
			m, err = recv()
		}
		if err != nil {
			return fmt.Errorf("%s REGISTER %s: %v", *label, user, err)
		}
		show("REGISTER", user, m)
	}
	if *registrations != "" {
		for i, e := range strings.Split(*registrations, ",") {
			user, exp, hasExp := strings.Cut(strings.TrimSpace(e), "=")
			if user == "" || strings.ContainsAny(user, "@<>;: ") || i >= 10000 {
				return fmt.Errorf("sip-client: -registrations: %q is not user[=seconds]", e)
			}
			contact := "Contact: <sip:" + user + "@" + local + ">\r\nExpires: 60\r\n"
			if hasExp {
				n, err := strconv.ParseUint(exp, 10, 32)
				if err != nil {
					return fmt.Errorf("sip-client: -registrations: %q: expires %q is not a number of seconds", e, exp)
				}
				contact = "Contact: <sip:" + user + "@" + local + ">;expires=" + strconv.FormatUint(n, 10) + "\r\n"
			}
			reg := request("REGISTER", "reg-"+user, i+2, "")
			reg = strings.Replace(reg, "<sip:"+*callee+"@"+*connect+">", "<sip:"+user+"@"+*connect+">", 1)
			reg = strings.Replace(reg, "\r\nCSeq:", "\r\n"+contact+"CSeq:", 1)
			if err := send(reg); err != nil {
				return err
			}
			m, err := recv()
			for err == nil && m.Code < 200 {
				m, err = recv()
			}
			if err != nil {
				return fmt.Errorf("%s REGISTER %s: %v", *label, user, err)
			}
			show("REGISTER", strings.TrimSpace(e), m)
		}
	}
	for i := 1; i <= *calls; i++ {
		callID := fmt.Sprintf("%s-call-%d", *label, i)
		sdp := "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\n"
		if *media != "" {
			host, _, _ := net.SplitHostPort(local)
			sdp += "c=IN IP4 " + host + "\r\nt=0 0\r\nm=" + *media + "\r\n"
		}
		if err := send(request("INVITE", callID, 1, sdp)); err != nil {
			return err
		}
		members := map[string]bool{}
		for {
			m, err := recv()
			if err != nil {
				return fmt.Errorf("%s INVITE %s: %v", *label, callID, err)
			}
			show("INVITE", callID, m)
			members[sipField(m, "x-member")] = true
			if m.Code >= 200 {
				break
			}
		}
		if err := send(request("ACK", callID, 1, "")); err != nil {
			return err
		}
		for j := 1; j <= *info; j++ {
			if err := send(request("INFO", callID, 1+j, "")); err != nil {
				return err
			}
			m, err := recv()
			if err != nil {
				return fmt.Errorf("%s INFO %s: %v", *label, callID, err)
			}
			show("INFO", callID, m)
			members[sipField(m, "x-member")] = true
		}
		if err := send(request("BYE", callID, 2+*info, "")); err != nil {
			return err
		}
		m, err := recv()
		if err != nil {
			return fmt.Errorf("%s BYE %s: %v", *label, callID, err)
		}
		show("BYE", callID, m)
		members[sipField(m, "x-member")] = true
		if *summary {
			var ms []string
			for k := range members {
				ms = append(ms, k)
			}
			sort.Strings(ms)
			fmt.Fprintf(stdout, "%s dialog %s on %s\n", *label, callID, strings.Join(ms, " and "))
		}
	}
	for i := 1; i <= *options; i++ {
		callID := fmt.Sprintf("%s-options-%d", *label, i)
		if err := send(request(*optMethod, callID, 1, "")); err != nil {
			return err
		}
		m, err := recv()
		if err != nil {
			return fmt.Errorf("%s %s %s: %v", *label, *optMethod, callID, err)
		}
		show(*optMethod, callID, m)
	}
	if *summary {
		var ks []string
		for k := range perMember {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		var parts []string
		for _, k := range ks {
			parts = append(parts, fmt.Sprintf("%s %d", k, perMember[k]))
		}
		fmt.Fprintf(stdout, "%s: answers by member: %s\n", *label, strings.Join(parts, ", "))
	}
	if *waitClose && !*udp {
		c.SetReadDeadline(time.Now().Add(*timeout))
		if _, err := r.ReadByte(); err == nil {
			return fmt.Errorf("%s: the virtual sent more instead of closing", *label)
		} else if !errors.Is(err, io.EOF) {
			return fmt.Errorf("%s: waiting for the close: %v", *label, err)
		}
		fmt.Fprintf(stdout, "%s: connection closed by the virtual\n", *label)
	}
	return nil
}
