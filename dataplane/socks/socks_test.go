package socks

import (
	"bytes"
	"errors"
	"io"
	"net/netip"
	"testing"
)

// rw is a client's bytes in and the proxy's out.
type rw struct {
	in  *bytes.Reader
	out bytes.Buffer
}

func (c *rw) Read(p []byte) (int, error)  { return c.in.Read(p) }
func (c *rw) Write(p []byte) (int, error) { return c.out.Write(p) }

func TestReadRequest(t *testing.T) {
	all := V4 | V4A | V5
	greet := []byte{5, 1, 0}
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	for _, tc := range []struct {
		name    string
		in      []byte
		accept  Versions
		want    *Request
		out     []byte // what the proxy wrote (method selection)
		code    byte   // for an *Error with a reply
		version int    // the *Error's reply version (0: none)
		err     error  // another error
		rest    int    // bytes left unread after the request
	}{
		{name: "socks4 connect", in: []byte{4, 1, 0, 80, 127, 103, 0, 1, 'u', 0}, accept: all,
			want: &Request{Version: 4, Cmd: 1, Addr: netip.MustParseAddr("127.103.0.1"), Port: 80, User: "u"}},
		{name: "socks4a", in: cat([]byte{4, 1, 1, 187, 0, 0, 0, 9, 0}, []byte("www.example\x00")), accept: all,
			want: &Request{Version: 4, Cmd: 1, Host: "www.example", Port: 443}},
		{name: "socks4 data after the request stays", in: []byte{4, 1, 0, 80, 127, 103, 0, 1, 0, 'G', 'E'}, accept: all,
			want: &Request{Version: 4, Cmd: 1, Addr: netip.MustParseAddr("127.103.0.1"), Port: 80}, rest: 2},
		{name: "socks4 bind", in: []byte{4, 2, 0, 80, 127, 103, 0, 1, 0}, accept: all, code: CmdNotSupported, version: 4},
		{name: "socks4a refused when only 4", in: cat([]byte{4, 1, 0, 80, 0, 0, 0, 1, 0}, []byte("h\x00")), accept: V4, code: GeneralFailure, version: 4},
		{name: "socks4 refused when only 4a", in: []byte{4, 1, 0, 80, 127, 103, 0, 1, 0}, accept: V4A, code: GeneralFailure, version: 4},
		{name: "socks4a empty name", in: []byte{4, 1, 0, 80, 0, 0, 0, 1, 0, 0}, accept: all, code: GeneralFailure, version: 4},
		{name: "socks4 user id too long", in: cat([]byte{4, 1, 0, 80, 127, 103, 0, 1}, bytes.Repeat([]byte{'a'}, 300)), accept: all, code: GeneralFailure, version: 4},
		{name: "socks4 truncated", in: []byte{4, 1, 0}, accept: all, err: io.ErrUnexpectedEOF},
		{name: "version 4 not offered", in: []byte{4, 1, 0, 80, 127, 103, 0, 1, 0}, accept: V5},
		{name: "not socks", in: []byte("GET / HTTP/1.1\r\n"), accept: all},
		{name: "socks5 ipv4", in: cat(greet, []byte{5, 1, 0, 1, 127, 103, 0, 2, 0x1f, 0x90}), accept: all, out: []byte{5, 0},
			want: &Request{Version: 5, Cmd: 1, Addr: netip.MustParseAddr("127.103.0.2"), Port: 8080}},
		{name: "socks5 name", in: cat([]byte{5, 2, 2, 0}, []byte{5, 1, 0, 3, 7}, []byte("a.local"), []byte{0, 80}), accept: all, out: []byte{5, 0},
			want: &Request{Version: 5, Cmd: 1, Host: "a.local", Port: 80}},
		{name: "socks5 literal as a name", in: cat(greet, []byte{5, 1, 0, 3, 11}, []byte("127.103.0.3"), []byte{0, 80}), accept: all, out: []byte{5, 0},
			want: &Request{Version: 5, Cmd: 1, Addr: netip.MustParseAddr("127.103.0.3"), Port: 80}},
		{name: "socks5 ipv6", in: cat(greet, []byte{5, 1, 0, 4}, netip.MustParseAddr("::1").AsSlice(), []byte{0, 80}), accept: all, out: []byte{5, 0},
			want: &Request{Version: 5, Cmd: 1, Addr: netip.MustParseAddr("::1"), Port: 80}},
		{name: "socks5 username/password only", in: []byte{5, 1, 2}, accept: all, out: []byte{5, 0xff}, err: ErrNoAcceptableMethod},
		{name: "socks5 bind", in: cat(greet, []byte{5, 2, 0, 1, 127, 103, 0, 2, 0, 80}), accept: all, out: []byte{5, 0}, code: CmdNotSupported, version: 5},
		{name: "socks5 udp associate", in: cat(greet, []byte{5, 3, 0, 1, 0, 0, 0, 0, 0, 0}), accept: all, out: []byte{5, 0}, code: CmdNotSupported, version: 5},
		{name: "socks5 bad address type", in: cat(greet, []byte{5, 1, 0, 9, 0, 0}), accept: all, out: []byte{5, 0}, code: AddrTypeNotSupport, version: 5},
		{name: "socks5 not offered", in: greet, accept: V4 | V4A},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &rw{in: bytes.NewReader(tc.in)}
			req, err := ReadRequest(c, tc.accept)
			if !bytes.Equal(c.out.Bytes(), tc.out) {
				t.Errorf("wrote % x, want % x", c.out.Bytes(), tc.out)
			}
			if tc.want != nil {
				if err != nil {
					t.Fatalf("error %v", err)
				}
				if *req != *tc.want {
					t.Errorf("got %+v, want %+v", *req, *tc.want)
				}
				if c.in.Len() != tc.rest {
					t.Errorf("%d bytes left, want %d", c.in.Len(), tc.rest)
				}
				return
			}
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Errorf("error %v, want %v", err, tc.err)
				}
				return
			}
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("error %v (%T), want a *socks.Error", err, err)
			}
			if se.Version != tc.version || (tc.version != 0 && se.Code != tc.code) {
				t.Errorf("reply v%d code %d, want v%d code %d (%v)", se.Version, se.Code, tc.version, tc.code, se)
			}
		})
	}
}

func TestReply(t *testing.T) {
	for _, tc := range []struct {
		name    string
		version int
		code    byte
		bound   netip.AddrPort
		want    []byte
	}{
		{"v4 granted", 4, Succeeded, netip.MustParseAddrPort("127.103.0.1:4660"), []byte{0, 90, 0x12, 0x34, 127, 103, 0, 1}},
		{"v4 refused", 4, Refused, netip.AddrPort{}, []byte{0, 91, 0, 0, 0, 0, 0, 0}},
		{"v5 ipv4", 5, Succeeded, netip.MustParseAddrPort("127.103.0.1:80"), []byte{5, 0, 0, 1, 127, 103, 0, 1, 0, 80}},
		{"v5 mapped", 5, Succeeded, netip.MustParseAddrPort("[::ffff:127.103.0.1]:80"), []byte{5, 0, 0, 1, 127, 103, 0, 1, 0, 80}},
		{"v5 ipv6", 5, Succeeded, netip.MustParseAddrPort("[::1]:1"), append(append([]byte{5, 0, 0, 4}, netip.MustParseAddr("::1").AsSlice()...), 0, 1)},
		{"v5 not allowed", 5, NotAllowed, netip.AddrPort{}, []byte{5, 2, 0, 1, 0, 0, 0, 0, 0, 0}},
	} {
		if got := AppendReply(nil, tc.version, tc.code, tc.bound); !bytes.Equal(got, tc.want) {
			t.Errorf("%s: % x, want % x", tc.name, got, tc.want)
		}
	}
}

func TestParseDestination(t *testing.T) {
	for _, tc := range []struct {
		in   string
		host string
		addr string
		port uint16
		bad  bool
	}{
		{in: "127.103.0.1:80", addr: "127.103.0.1", port: 80},
		{in: "[::1]:443", addr: "::1", port: 443},
		{in: "WWW.Example:8080", host: "www.example", port: 8080},
		{in: "127.103.0.1", bad: true},
		{in: "h:0", bad: true},
		{in: "h:70000", bad: true},
		{in: ":80", bad: true},
		{in: "a b:80", bad: true},
	} {
		h, a, p, err := ParseDestination(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("%s: accepted", tc.in)
			}
			continue
		}
		if err != nil || h != tc.host || p != tc.port || (tc.addr != "" && a != netip.MustParseAddr(tc.addr)) {
			t.Errorf("%s: %q %v %d %v", tc.in, h, a, p, err)
		}
	}
}

func TestParseVersions(t *testing.T) {
	if v, err := ParseVersions([]string{"socks4", "socks5"}); err != nil || v != V4|V5 {
		t.Errorf("%b %v", v, err)
	}
	if _, err := ParseVersions([]string{"socks6"}); err == nil {
		t.Error("socks6 accepted")
	}
}
