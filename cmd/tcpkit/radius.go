package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/rfc2866"
)

// radiusServerMain is `tcpkit radius-server`: a RADIUS member that
// accepts every Access-Request and answers every Accounting-Request
// (refusing, as RADIUS servers do, a request whose authenticator the
// secret does not give), with a Reply-Message naming itself and the
// User-Name it got; it logs each request with its User-Name and
// Calling-Station-Id.
func radiusServerMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("radius-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "", "address:port to listen on (UDP)")
	label := fs.String("label", "R1", "the member's name in its Reply-Message")
	secret := fs.String("secret", "testing123", "the shared secret")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *listen == "" {
		return errors.New("radius-server: -listen is required")
	}
	pc, err := net.ListenPacket("udp", *listen)
	if err != nil {
		return err
	}
	var mu sync.Mutex
	srv := &radius.PacketServer{
		SecretSource: radius.StaticSecretSource([]byte(*secret)),
		Handler: radius.HandlerFunc(func(w radius.ResponseWriter, r *radius.Request) {
			user, csid := rfc2865.UserName_GetString(r.Packet), rfc2865.CallingStationID_GetString(r.Packet)
			mu.Lock()
			fmt.Fprintf(stdout, "%s got %s id %d User-Name %s Calling-Station-Id %s\n", *label, r.Code, r.Identifier, user, csid)
			mu.Unlock()
			code := radius.CodeAccessAccept
			if r.Code == radius.CodeAccountingRequest {
				code = radius.CodeAccountingResponse
			}
			resp := r.Response(code)
			rfc2865.ReplyMessage_SetString(resp, *label+" user="+user)
			w.Write(resp)
		}),
	}
	go func() { <-ctx.Done(); srv.Shutdown(context.Background()) }()
	if err := srv.Serve(pc); err != nil && !errors.Is(err, radius.ErrServerShutdown) {
		return err
	}
	return nil
}

// radiusClientMain is `tcpkit radius-client`: one request per
// Calling-Station-Id given (Access-Request, or Accounting-Request with
// -acct), each from a socket of its own as a NAS's ports are, resent
// until answered; it prints the answer's code and Reply-Message, or that
// none came or the answer's authenticator did not verify.
func radiusClientMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("radius-client", flag.ContinueOnError)
	fs.SetOutput(stderr)
	connect := fs.String("connect", "", "the virtual's address:port")
	bind := fs.String("bind", "", "the local address to send from")
	secret := fs.String("secret", "testing123", "the shared secret")
	user := fs.String("user", "user", "the User-Name")
	csids := fs.String("csid", "", "Calling-Station-Id values, comma-separated: one request each (none: one request without)")
	acct := fs.Bool("acct", false, "send Accounting-Request (Start) instead of Access-Request")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *connect == "" {
		return errors.New("radius-client: -connect is required")
	}
	c := radius.Client{Retry: 300 * time.Millisecond}
	if *bind != "" {
		a, err := net.ResolveUDPAddr("udp", net.JoinHostPort(*bind, "0"))
		if err != nil {
			return err
		}
		c.Dialer.LocalAddr = a
	}
	list := strings.Split(*csids, ",")
	failed := false
	for _, csid := range list {
		code := radius.CodeAccessRequest
		if *acct {
			code = radius.CodeAccountingRequest
		}
		p := radius.New(code, []byte(*secret))
		rfc2865.UserName_SetString(p, *user)
		if csid != "" {
			rfc2865.CallingStationID_SetString(p, csid)
		}
		if *acct {
			rfc2866.AcctStatusType_Set(p, rfc2866.AcctStatusType_Value_Start)
		} else {
			rfc2865.UserPassword_SetString(p, "password")
		}
		rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		resp, err := c.Exchange(rctx, p, *connect)
		cancel()
		if err != nil {
			fmt.Fprintf(stdout, "%s %s -> no verified answer (%v)\n", code, csid, err)
			failed = true
			continue
		}
		fmt.Fprintf(stdout, "%s %s -> %s %q\n", code, csid, resp.Code, rfc2865.ReplyMessage_GetString(resp))
	}
	if failed {
		return errors.New("radius-client: some requests had no verified answer")
	}
	return nil
}
