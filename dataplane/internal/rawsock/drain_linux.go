package rawsock

// CloseQuietly closes a non-blocking socket with a FIN where it can:
// what the peer has sent so far is read and dropped first (Drain); data
// that comes after still makes the kernel reset it.
func CloseQuietly(fd int) {
	Drain(fd)
	Close(fd)
}
