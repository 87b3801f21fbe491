package main

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/iiop"
	"github.com/openltm/openltm/dataplane/iiop/iioptest"
)

// TestIIOPServeAndClient: the client's pipelined requests reach the
// member, whose replies (one delayed) come back by request id, printed
// sorted or as they came; a request never answered ends the client with
// an error after its timeout.
func TestIIOPServeAndClient(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var srv syncBuf
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"iiop-serve", "-listen", "127.243.3.1:24501", "-label", "S7"}, nil, &srv, &srv)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(srv.String(), "GIOP on") {
		if time.Now().After(deadline) {
			t.Fatalf("server did not start: %s", srv.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, tc := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"-n", "3", "-keys", "a,b", "-ops", "delay:200,get"}, 0, "reply id 1: S7\nreply id 2: S7\nreply id 3: S7\n"},
		{[]string{"-n", "2", "-ops", "delay:200,get", "-arrival", "-version", "1.0", "-little"}, 0, "reply id 2: S7\nreply id 1: S7\n"},
		{[]string{"-n", "1", "-locate", "-id", "9", "-version", "1.1"}, 0, "locate reply id 9\n"},
		{[]string{"-n", "2", "-id", "20", "-fragment", "8", "-ops", "say:f2"}, 0, "reply id 20: S7/f2\nreply id 21: S7/f2\n"},
		{[]string{"-n", "1", "-id", "30", "-fragment", "8", "-version", "1.1", "-little", "-ops", "say:f1"}, 0, "reply id 30: S7/f1\n"},
		{[]string{"-fragment", "4", "-version", "1.1"}, 1, ""},
		{[]string{"-fragment", "8", "-version", "1.0"}, 1, ""},
		{[]string{"-n", "1", "-ops", "noreply", "-timeout", "300ms"}, 1, ""},
		{[]string{"-version", "2.0"}, 1, ""},
	} {
		var out, errb bytes.Buffer
		code := run(ctx, append([]string{"iiop", "-connect", "127.243.3.1:24501"}, tc.args...), nil, &out, &errb)
		if code != tc.code || out.String() != tc.out {
			t.Errorf("iiop %v: status %d output %q (%s), want %d %q", tc.args, code, out.String(), errb.String(), tc.code, tc.out)
		}
	}
	if !strings.Contains(srv.String(), "S7: Request id 1 key a op delay:200") || !strings.Contains(srv.String(), "S7: LocateRequest id 9 key obj") ||
		!strings.Contains(srv.String(), "S7: Request id 21 key obj op say:f2 (in 2 fragments)") || !strings.Contains(srv.String(), "S7: Request id 30 key obj op say:f1 (in 2 fragments)") {
		t.Errorf("server log:\n%s", srv.String())
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("iiop-serve ended with %d", code)
	}
}

// TestIIOPClientSystemException: a Reply carrying a system exception
// (a proxy's COMM_FAILURE) is printed as its repository id, minor code
// and completion status, in every GIOP version and byte order, not as
// a body.
func TestIIOPClientSystemException(t *testing.T) {
	ln, err := net.Listen("tcp", "127.29.2.1:29201")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				b, err := iioptest.ReadMessage(c)
				if err != nil {
					return
				}
				m, err := iiop.Parse(b)
				if err != nil {
					return
				}
				c.Write(iiop.AppendSystemException(nil, m.Minor, m.Little(), m.RequestID, false, iiop.CommFailure, 3, iiop.CompletedMaybe))
			}()
		}
	}()
	for _, args := range [][]string{{"-version", "1.0"}, {"-version", "1.1", "-little"}, {"-version", "1.2"}} {
		var out, errb bytes.Buffer
		code := run(context.Background(), append([]string{"iiop", "-connect", "127.29.2.1:29201", "-id", "5"}, args...), nil, &out, &errb)
		want := "reply id 5: system exception IDL:omg.org/CORBA/COMM_FAILURE:1.0 minor 3 COMPLETED_MAYBE\n"
		if code != 0 || out.String() != want {
			t.Errorf("iiop %v: status %d output %q (%s), want 0 %q", args, code, out.String(), errb.String(), want)
		}
	}
}
