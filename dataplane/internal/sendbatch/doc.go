// Package sendbatch sends the writes an event loop gathers over one batch
// of events to many sockets with one system call (an io_uring of the
// loop's own, each send non-blocking), where the kernel gives rings.
//
// Why: at the end of a batch a loop of message clients writes a request
// to each of several member connections; one send(2) each woke the
// member it wrote to, which took the loop's CPU before the next send
// (switched out on the return of those sends 0.17 times per message at
// 64 clients, against HAProxy's 0.06), so each member woke for fewer
// messages and every process paid more switches. Submitted together, the
// sends all leave before the call returns.
package sendbatch
