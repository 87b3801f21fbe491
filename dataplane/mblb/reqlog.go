package mblb

import (
	"strconv"
	"time"

	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/dataplane/reqlog"
)

// RequestLog is an HTTP virtual's request-log profile as the engine
// applies it: a line per request when it is sent to its member, and per
// response when it arrives, each to its pool over high-speed logging.
// Logging never holds a message up: a line the sender cannot queue is
// dropped (and counted by the sender).
type RequestLog struct {
	// Request and Response are the templates; nil: that logging is
	// disabled.
	Request, Response *reqlog.Template
	// SendRequest and SendResponse queue a line for the logging pool.
	SendRequest, SendResponse func([]byte) bool
	// CheckRequest and CheckResponse are the same pools' senders for a
	// side whose failures are handled (an error log to write, or an
	// answer to give); nil otherwise, and the side costs no more.
	CheckRequest, CheckResponse RequestLogSend
	// VirtualName, PoolName (the virtual's default pool) and Hostname
	// fill $VIRTUAL_NAME, $VIRTUAL_POOL_NAME and $BIGIP_HOSTNAME.
	VirtualName, PoolName, Hostname string

	// RequestError and ResponseError, when set, are where a line goes
	// that its logging pool could not take (log-request-logging-errors,
	// log-response-logging-error); nil: such a line is only counted.
	RequestError, ResponseError *ErrorLog
	// Respond, when set, is the answer the client gets in the place of
	// a request whose line could not be logged, which then does not go
	// to its member (proxy-respond-on-logging-error); CloseOnError
	// closes the connection after it (proxy-close-on-error).
	Respond      []byte
	CloseOnError bool
}

// ErrorLog is one side's error logging: its own template and logging
// pool.
type ErrorLog struct {
	Template *reqlog.Template
	Send     func([]byte) bool
}

// LoggingErrorResponse is the answer to a request whose line could not
// be logged: a 502 with the profile's proxy-response as its body [M],
// closing the connection when closeAfter is set.
func LoggingErrorResponse(body string, closeAfter bool) []byte {
	b := make([]byte, 0, 128+len(body))
	b = append(b, "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/html\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	if closeAfter {
		b = append(b, "\r\nConnection: close"...)
	}
	b = append(b, "\r\n\r\n"...)
	return append(b, body...)
}

// RequestLogSend is a logging pool's sender as the error settings need
// it: it says whether the line can go now, and calls dropped (when not
// nil) with a line queued that no member then took.
type RequestLogSend func(line []byte, dropped func([]byte)) bool

// logRequest writes the request line of m, about to go to sc, and says
// whether the request may go on: false when its line could not be
// logged and the profile answers the client instead (Respond).
func (s *ClientConn) logRequest(rl *RequestLog, m *msg, sc *serverConn) bool {
	now := time.Now()
	m.hx.logAt = now.UnixNano()
	if rl.Request == nil || rl.SendRequest == nil {
		return true
	}
	r := reqlog.Record{Client: s.client, Virtual: s.local, Server: sc.leg.Remote, SNAT: sc.leg.Local,
		VirtualName: rl.VirtualName, PoolName: rl.PoolName, Hostname: rl.Hostname,
		Request: m.b[:m.hx.hlen], KeepAlive: !m.httpClose, Start: now, Now: now}
	line := rl.Request.Append(make([]byte, 0, 256), &r)
	if rl.CheckRequest == nil {
		rl.SendRequest(line)
		return true
	}
	return logChecked(rl.CheckRequest, rl.RequestError, line, &r) || rl.Respond == nil
}

// logChecked sends line through a side whose failures are handled: a
// line its pool cannot take now, or later finds no member for, is
// written with the error template to the error pool. It says whether
// the line could go.
func logChecked(send RequestLogSend, el *ErrorLog, line []byte, r *reqlog.Record) bool {
	if el == nil {
		return send(line, nil)
	}
	// The error line is written now, while the record's heads are the
	// message's: a line dropped later cannot read them again.
	errLine := el.Template.Append(make([]byte, 0, 256), r)
	if send(line, func([]byte) { el.Send(errLine) }) {
		return true
	}
	el.Send(errLine)
	return false
}

// logResponse writes the response line of the response b (h) to req,
// which came on sc.
func (sc *serverConn) logResponse(rl *RequestLog, req *msg, b []byte, h *httpx.Head) {
	if rl.Response == nil || rl.SendResponse == nil {
		return
	}
	s := req.sess
	size := int64(len(b) - h.Start)
	if sc.strm.head && h.ContentLength > 0 {
		// A streamed answer: its length as it says [M].
		size = int64(h.HeaderEnd-h.Start) + h.ContentLength
	}
	now := time.Now()
	r := reqlog.Record{Client: s.client, Virtual: s.local, Server: sc.leg.Remote, SNAT: sc.leg.Local,
		VirtualName: rl.VirtualName, PoolName: rl.PoolName, Hostname: rl.Hostname,
		Request: req.b[:req.hx.hlen], Response: b[h.Start:h.HeaderEnd], KeepAlive: !req.httpClose,
		ResponseSize: size, Now: now}
	if req.hx.logAt != 0 {
		r.Start = time.Unix(0, req.hx.logAt)
	}
	line := rl.Response.Append(make([]byte, 0, 256), &r)
	if rl.CheckResponse != nil {
		logChecked(rl.CheckResponse, rl.ResponseError, line, &r)
		return
	}
	rl.SendResponse(line)
}
