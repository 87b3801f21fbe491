package icap_test

import (
	"bytes"
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/icap"
	"github.com/openltm/openltm/dataplane/icap/icaptest"
)

// TestPartial: the start of a body that goes on (a message streamed past
// the engine's bound) goes as a preview without ieof, even when it all
// fits in the preview; a 204 or a page decided on it ends the exchange,
// and a server that asks for the rest, or a service taking no preview,
// fails it with ErrWhole (the connection is not kept: half an exchange).
func TestPartial(t *testing.T) {
	decide, err := icaptest.Listen("127.66.130.30:0", icaptest.Config{Block: "EICAR", DecidePreview: true})
	if err != nil {
		t.Fatal(err)
	}
	defer decide.Close()
	wants, err := icaptest.Listen("127.66.130.31:0", icaptest.Config{Block: "EICAR"})
	if err != nil {
		t.Fatal(err)
	}
	defer wants.Close()
	head := []byte("PUT /up HTTP/1.1\r\nHost: a\r\nContent-Length: 9999999\r\n\r\n")
	start := bytes.Repeat([]byte("a"), 64)
	for _, tc := range []struct {
		name    string
		srv     *icaptest.Server
		preview int
		body    []byte
		want    icap.Outcome
		err     error
		kept    int // idle connections after it
	}{
		{"204 on the preview", decide, 16, start, icap.Unmodified, nil, 1},
		{"start shorter than the preview: still no ieof", decide, 1024, start, icap.Unmodified, nil, 1},
		{"blocked in the preview", decide, 16, append([]byte("EICAR"), start...), icap.Answered, nil, 1},
		{"the server wants the rest", wants, 16, start, 0, icap.ErrWhole, 0},
		{"no preview (only OPTIONS went)", decide, 0, start, 0, icap.ErrWhole, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := netip.MustParseAddrPort(tc.srv.Addr())
			cl := &icap.Client{}
			defer cl.CloseIdle()
			s := &icap.Service{URI: "icap://${SERVER_IP}:${SERVER_PORT}/av", Preview: tc.preview, Timeout: 5 * time.Second, Client: cl}
			eof, prev := tc.srv.Stats.PreviewEOF.Load(), tc.srv.Stats.Previews.Load()
			r, err := s.Exchange(context.Background(), addr, icap.ReqMod, &icap.Message{ReqHead: head, ReqBody: tc.body, Partial: true})
			if !errors.Is(err, tc.err) || err != nil && tc.err == nil {
				t.Fatalf("error %v, want %v", err, tc.err)
			}
			if err == nil && r.Outcome != tc.want {
				t.Fatalf("outcome %v, want %v", r.Outcome, tc.want)
			}
			if n := tc.srv.Stats.PreviewEOF.Load() - eof; n != 0 {
				t.Fatalf("%d previews with ieof, want none", n)
			}
			if n, want := tc.srv.Stats.Previews.Load()-prev, int64(min(tc.preview, 1)); n != want {
				t.Fatalf("%d previews, want %d", n, want)
			}
			if n := cl.Idle(addr); n != tc.kept {
				t.Fatalf("%d connections kept, want %d", n, tc.kept)
			}
		})
	}
}
