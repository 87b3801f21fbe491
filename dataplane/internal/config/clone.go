package config

// ClonePool is one of a virtual's clone-pools: a pool that gets a copy of
// the client's traffic (dataplane/clone) and never answers the client.
type ClonePool struct {
	// Pool is the clone pool's full path.
	Pool string
	// Server is context serverside: the copy is what the default pool's
	// member gets (after iRule and HTTP rewriting); otherwise clientside,
	// what the client sent.
	Server bool
}
