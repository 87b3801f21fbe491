// Package control carries tmsh requests to ltmd over a Unix socket:
// newline-delimited JSON (readable with socat when debugging), one request
// type per verb, and responses streamed in chunks so long shows never sit in
// memory whole. It holds the server (in ltmd, calling a Backend), the client
// (in tmsh), and the socket's permission and peer-credential checks.
package control
