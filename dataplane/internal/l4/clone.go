package l4

// Clone pools (dataplane/clone): a flow of a virtual with clone pools
// starts its clone connections when the client is admitted (flow.init) and
// closes them when it retires; the copy loops hand over what the client
// sends. Flows of virtuals without clone pools test one nil pointer.

// cloneRead mirrors b, read from the client. When the bytes go to the
// member as they are (no rule collecting them) the serverside pools get
// them too; otherwise those get what the rule releases (cloneSent).
func (fl *flow) cloneRead(b []byte, st *sideState) {
	if st != nil && st.on.Load() {
		fl.clone.Client(b)
		return
	}
	fl.clone.Both(b)
}

// cloneSent mirrors b, rewritten on its way to the member (a stream
// filter, a rule's release), to the serverside pools.
func (fl *flow) cloneSent(b []byte) {
	if fl.clone != nil {
		fl.clone.Server(b)
	}
}
