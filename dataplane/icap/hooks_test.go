package icap_test

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/icap"
	"github.com/openltm/openltm/dataplane/icap/icaptest"
)

// hooks records the heads it saw and applies edit to the request's.
type hooks struct {
	edit    func(h *icap.Head) error
	answer  func(h *icap.Head) error
	reqSeen icap.Head
	resSeen icap.Head
}

func (k *hooks) Request(h *icap.Head) error {
	k.reqSeen = icap.Head{Method: h.Method, URI: h.URI, Fields: append([][2]string(nil), h.Fields...)}
	if k.edit != nil {
		return k.edit(h)
	}
	return nil
}

func (k *hooks) Response(h *icap.Head) error {
	k.resSeen = icap.Head{Method: h.Method, URI: h.URI, Status: h.Status, Fields: append([][2]string(nil), h.Fields...)}
	if k.answer != nil {
		return k.answer(h)
	}
	return nil
}

func field(h icap.Head, name string) (string, bool) {
	for _, f := range h.Fields {
		if strings.EqualFold(f[0], name) {
			return f[1], true
		}
	}
	return "", false
}

// TestHooks: the rules of the internal virtual server see each ICAP
// request before it leaves and each answer's head, and their edits go
// on the wire (or fail the exchange).
func TestHooks(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	srv, err := icaptest.Listen("127.66.16.10:0", icaptest.Config{Block: "EICAR", Show: []string{"x-client-ip", "user-agent", "preview", "encapsulated"},
		Answer: "X-Infection-Found: none", Log: func(l string) { mu.Lock(); lines = append(lines, l); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	addr := netip.MustParseAddrPort(srv.Addr())
	plain := []byte("GET /a HTTP/1.1\r\nHost: a\r\n\r\n")
	resp := []byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n")
	boom := errors.New("rule failed")
	for _, tc := range []struct {
		name    string
		mode    icap.Mode
		body    string
		edit    func(h *icap.Head) error
		answer  func(h *icap.Head) error
		wantErr error
		logs    []string // lines the server logged
		status  int      // the answer the response hook saw
	}{
		{name: "seen unchanged", mode: icap.ReqMod, logs: []string{"REQMOD uri icap://" + srv.Addr() + "/av", "REQMOD x-client-ip absent", "REQMOD user-agent: ua/1", "REQMOD encapsulated: req-hdr=0, req-body=28"}, status: 204},
		{name: "insert and remove", mode: icap.ReqMod, edit: func(h *icap.Head) error {
			h.Fields = append(h.Fields, [2]string{"X-Client-IP", "127.66.0.9"})
			for i, f := range h.Fields {
				if f[0] == "User-Agent" {
					h.Fields = append(h.Fields[:i], h.Fields[i+1:]...)
					break
				}
			}
			return nil
		}, logs: []string{"REQMOD x-client-ip: 127.66.0.9", "REQMOD user-agent absent"}, status: 204},
		{name: "uri replaced", mode: icap.RespMod, body: "fine.", edit: func(h *icap.Head) error { h.URI += "?mode=strict"; return nil },
			logs: []string{"RESPMOD uri icap://" + srv.Addr() + "/av?mode=strict"}, status: 204},
		{name: "framing fields set again", mode: icap.ReqMod, edit: func(h *icap.Head) error {
			h.Fields = append(h.Fields, [2]string{"Encapsulated", "null-body=0"})
			return nil
		}, logs: []string{"REQMOD encapsulated: req-hdr=0, req-body=28"}, status: 204},
		{name: "blocked answer seen", mode: icap.ReqMod, body: "EICAR", status: 200},
		{name: "request hook error fails", mode: icap.ReqMod, edit: func(*icap.Head) error { return boom }, wantErr: boom},
		{name: "response hook error fails", mode: icap.ReqMod, answer: func(*icap.Head) error { return boom }, wantErr: boom, status: 204},
		{name: "invalid field refused", mode: icap.ReqMod, edit: func(h *icap.Head) error {
			h.Fields = append(h.Fields, [2]string{"Bad Name", "x"})
			return nil
		}, wantErr: errAny},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			lines = nil
			mu.Unlock()
			k := &hooks{edit: tc.edit, answer: tc.answer}
			s := &icap.Service{URI: "icap://${SERVER_IP}:${SERVER_PORT}/av", UserAgent: "ua/1", Timeout: 5 * time.Second, Client: &icap.Client{}}
			m := &icap.Message{ReqHead: plain, ReqBody: []byte(tc.body), Hooks: k}
			if tc.mode == icap.RespMod {
				m.RespHead, m.RespBody, m.ReqBody = resp, m.ReqBody, nil
			}
			_, err := s.Exchange(context.Background(), addr, tc.mode, m)
			switch {
			case tc.wantErr == errAny && err == nil, tc.wantErr != nil && tc.wantErr != errAny && !errors.Is(err, tc.wantErr):
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			case tc.wantErr == nil && err != nil:
				t.Fatal(err)
			}
			if k.reqSeen.Method != tc.mode.String() {
				t.Fatalf("request hook saw method %q", k.reqSeen.Method)
			}
			if v, _ := field(k.reqSeen, "Host"); v != srv.Addr() {
				t.Fatalf("request hook saw Host %q", v)
			}
			if k.resSeen.Status != tc.status {
				t.Fatalf("response hook saw status %d, want %d", k.resSeen.Status, tc.status)
			}
			if tc.status != 0 {
				if v, _ := field(k.resSeen, "X-Infection-Found"); v != "none" {
					t.Fatalf("response hook saw fields %q", k.resSeen.Fields)
				}
			}
			mu.Lock()
			got := strings.Join(lines, "\n")
			mu.Unlock()
			for _, l := range tc.logs {
				if !strings.Contains(got, l) {
					t.Fatalf("server logged %q, lacks %q", got, l)
				}
			}
		})
	}
}

var errAny = errors.New("any error")

// TestHooksHTTP: the hooks see and edit the encapsulated HTTP message
// (HTTP:: commands in ICAP_REQUEST and ICAP_RESPONSE): an edit of the
// request's head goes to the ICAP server with Encapsulated set again; an
// edit of the answer's message goes on with its body; after a 204 the
// heads that went are seen, read only; a head that does not parse fails
// the exchange.
func TestHooksHTTP(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	srv, err := icaptest.Listen("127.93.3.10:0", icaptest.Config{Header: "X-Scan", Value: "clean", Show: []string{"encapsulated"},
		Log: func(l string) { mu.Lock(); lines = append(lines, l); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	addr := netip.MustParseAddrPort(srv.Addr())
	plain := "GET /a HTTP/1.1\r\nHost: a\r\n\r\n"
	scan := "GET /a HTTP/1.1\r\nHost: a\r\nX-Scan: raw\r\n\r\n"
	resp := "HTTP/1.1 200 OK\r\nX-Scan: raw\r\nContent-Length: 5\r\n\r\n"
	insert := func(head []byte, line string) []byte {
		return []byte(strings.TrimSuffix(string(head), "\r\n") + line + "\r\n")
	}
	for _, tc := range []struct {
		name         string
		mode         icap.Mode
		req          string
		edit, answer func(h *icap.Head) error
		outcome      icap.Outcome
		msgHas       string // in the result's message
		log          string // the server logged
		seen         string // the answer hook saw, in its heads
		readOnly     bool
		wantErr      bool
	}{
		{name: "request head edited", mode: icap.ReqMod, req: plain, edit: func(h *icap.Head) error {
			h.Request = insert(h.Request, "X-Scan: raw\r\n")
			return nil
		}, outcome: icap.Modified, msgHas: "X-Scan: clean", log: "REQMOD encapsulated: req-hdr=0, req-body=41", seen: "X-Scan: clean"},
		{name: "modified request edited in the answer", mode: icap.ReqMod, req: scan, answer: func(h *icap.Head) error {
			h.Request = insert(h.Request, "X-After: 1\r\n")
			return nil
		}, outcome: icap.Modified, msgHas: "X-After: 1", seen: "X-Scan: clean"},
		{name: "modified response edited in the answer", mode: icap.RespMod, req: plain, answer: func(h *icap.Head) error {
			h.Response = insert(h.Response, "X-After: 2\r\n")
			return nil
		}, outcome: icap.Modified, msgHas: "X-After: 2\r\nContent-Length: 5\r\n\r\nfine.", seen: "HTTP/1.1 200 OK"},
		{name: "204: the heads that went, read only", mode: icap.ReqMod, req: plain, outcome: icap.Unmodified, seen: "GET /a HTTP/1.1", readOnly: true},
		{name: "invalid request head", mode: icap.ReqMod, req: plain, edit: func(h *icap.Head) error {
			h.Request = []byte("nonsense\r\n\r\n")
			return nil
		}, wantErr: true},
		{name: "invalid answer head", mode: icap.ReqMod, req: scan, answer: func(h *icap.Head) error {
			h.Request = []byte("nonsense\r\n\r\n")
			return nil
		}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			lines = nil
			mu.Unlock()
			var seen string
			var ro bool
			k := &hooks{edit: tc.edit, answer: func(h *icap.Head) error {
				seen, ro = string(h.Request)+string(h.Response), h.ReadOnly
				if tc.answer != nil {
					return tc.answer(h)
				}
				return nil
			}}
			s := &icap.Service{URI: "icap://${SERVER_IP}:${SERVER_PORT}/av", Timeout: 5 * time.Second, Client: &icap.Client{}}
			m := &icap.Message{ReqHead: []byte(tc.req), Hooks: k}
			if tc.mode == icap.RespMod {
				m.RespHead, m.RespBody = []byte(resp), []byte("fine.")
			}
			r, err := s.Exchange(context.Background(), addr, tc.mode, m)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("%v %q, want an error", r.Outcome, r.Msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Outcome != tc.outcome || !strings.Contains(string(r.Msg), tc.msgHas) {
				t.Fatalf("%v %q, want %v with %q", r.Outcome, r.Msg, tc.outcome, tc.msgHas)
			}
			if !strings.Contains(seen, tc.seen) || ro != tc.readOnly {
				t.Fatalf("the answer hook saw %q (read only %v), want %q (%v)", seen, ro, tc.seen, tc.readOnly)
			}
			mu.Lock()
			got := strings.Join(lines, "\n")
			mu.Unlock()
			if !strings.Contains(got, tc.log) {
				t.Fatalf("server logged %q, lacks %q", got, tc.log)
			}
		})
	}
}
