// Package ftpalg is the ftp profile's application layer gateway: BIG-IP
// rewrites the FTP control channel so that data connections, whose
// addresses travel inside the commands and answers (RFC 959 PORT and
// 227, RFC 2428 EPRT and 229), pass through the virtual server instead
// of going to addresses the other side cannot reach.
//
// The package is split by job: address.go reads and writes the address
// arguments, control.go follows one control connection's commands and
// answers and says what the proxy must do (pure: lines in, lines and
// decisions out), and data.go holds the helpers that accept and join a
// data connection. The L4 engine (dataplane/internal/l4/ftp.go) owns the
// sockets.
package ftpalg
