// Package control carries tmsh requests to ltmd over a Unix socket:
// newline-delimited JSON (readable with socat when debugging), one request
// type per verb, and responses streamed in chunks so long shows never sit in
// memory whole. It holds the server (in ltmd, calling a Backend), the client
// (in tmsh), and the socket's permission and peer-credential checks.
//
// A conversation, as `socat - UNIX-CONNECT:ltmd.sock` shows it (client
// lines first):
//
//	{"op":"hello"}
//	{"done":true,"prompt":{"user":"root","host":"bigip1","folder":"/Common","module":"","inTransaction":false,"quit":false},"version":1}
//	{"op":"exec","line":"list ltm pool p"}
//	{"out":"ltm pool p {\n    monitor http\n}\n"}
//	{"done":true,"prompt":{...}}
//	{"op":"exec","line":"delete ltm pool nope"}
//	{"done":true,"err":"01020036:3: The requested pool (/Common/nope) was not found.","prompt":{...}}
//	{"op":"complete","line":"create ltm po"}
//	{"done":true,"suggestions":[{"text":"pool","description":"...","group":"Components"}]}
//
// One connection is one session: the module context, the folder and an
// open cli transaction last as long as the connection. While an exec runs
// the client may send {"op":"cancel"} to interrupt it; nothing else.
package control
