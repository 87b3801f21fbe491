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
