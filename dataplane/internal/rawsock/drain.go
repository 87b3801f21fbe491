package rawsock

// Drain reads and drops what a non-blocking socket holds, up to 64 KiB:
// Linux resets a connection closed with data unread, and a client
// refused over the reject rate is to be closed with a FIN.
func Drain(fd int) {
	var buf [4096]byte
	for range 16 {
		if n, err := Read(fd, buf[:]); n == 0 || err != nil {
			break
		}
	}
}
