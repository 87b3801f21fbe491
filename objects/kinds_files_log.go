package objects

// fileLogKinds are the kinds that hold files for iRules and say where logs
// go: `sys file ifile` (a file's content, imported from source-path and
// kept with the configuration), `ltm ifile` (the name rules use for it)
// and `sys syslog` (remote syslog servers).
func fileLogKinds() []*Kind {
	sysIfile := &Kind{Words: []string{"sys", "file", "ifile"}, Title: "iFile", Lower: "ifile",
		Help:   "A file iRules read (through an ltm ifile): its content is imported from source-path when the object is created or source-path is set, and kept with the configuration",
		Source: tmshRef("sys file ifile"),
		Props: []*Prop{
			help(str("source-path", ""), "where the content is imported from: file:/path (or a plain absolute path); read when the object is created or source-path is set, even to the same path"),
			ro(str("checksum", "")),
			ro(num("size", "")),
			ro(num("revision", "")),
			ro(str("create-time", "")),
			ro(str("created-by", "")),
			ro(str("last-update-time", "")),
			ro(str("updated-by", "")),
			passive(str("cache-path", "")),
			ro(num("mode", "")),
			passive(str("description", "none")),
			passive(str("app-service", "none")),
		}}
	ltmIfile := &Kind{Words: []string{"ltm", "ifile"}, Title: "iFile", Lower: "ifile",
		Help:   "The name iRules use (ifile get NAME) for a sys file ifile",
		Source: tmshRef("ltm ifile"),
		Props: []*Prop{
			help(ref("file-name", "sys file ifile"), "the sys file ifile whose content ifile get returns"),
			passive(str("description", "none")),
			passive(str("app-service", "none")),
		}}
	// The file behind external data groups: its records are imported from
	// source-path like an iFile's content, and read in the format BIG-IP
	// writes them (objects/dgfile).
	sysDataGroup := &Kind{Words: []string{"sys", "file", "data-group"}, Title: "Data Group File", Lower: "data group file",
		Help:   "The records of external data groups: imported from source-path (\"key\" := \"value\", lines; host/network entries for ip) when the object is created or source-path is set, and kept with the configuration",
		Source: tmshRef("sys file data-group"),
		Props: append(copyProps(sysIfile.Props[:len(sysIfile.Props)-2]),
			help(enum("type", "string", "string", "ip", "integer"), "the records' keys: strings, addresses and networks, or integers"),
			help(str("separator", ":="), "what stands between a record's key and its value in the file"),
			passive(str("data-group-description", "none")),
			passive(str("data-group-name", "none")),
			passive(str("description", "none")),
			passive(str("app-service", "none")),
		)}
	ltmDataGroupExternal := &Kind{Words: []string{"ltm", "data-group", "external"}, Title: "value list", Lower: "value list",
		Help:   "A data group whose records are a sys file data-group's: class commands read it as an internal one",
		Source: tmshRef("ltm data-group external"),
		Props: []*Prop{
			help(ref("external-file-name", "sys file data-group"), "the sys file data-group holding the records"),
			help(enum("type", "", "string", "ip", "integer"), "when set, must be the file's type (the file decides)"),
			str("description", "none"),
			passive(str("app-service", "none")),
		}}
	ltmDataGroupExternal.Props[0].Checked = true
	remote := &Kind{Title: "Remote Server", Props: []*Prop{
		help(str("host", ""), "the syslog server's address; iRule log lines are sent to it as RFC 5424 over UDP"),
		num("remote-port", "514"),
		passive(str("local-ip", "none")),
		passive(str("description", "none")),
	}}
	remote.Props[1].Max = 65535
	syslog := &Kind{Words: []string{"sys", "syslog"}, Title: "Syslog", Singleton: true,
		Help:   "Where log lines go besides the local log file: remote syslog servers",
		Source: tmshRef("sys syslog"),
		Props: []*Prop{
			&Prop{Name: "remote-servers", Type: TColl, Items: ItemPlain, Sub: remote},
			passive(str("auth-priv-from", "notice")),
			passive(str("auth-priv-to", "emerg")),
			passive(str("clustered-host-slot", "enabled")),
			passive(str("clustered-message-slot", "disabled")),
			passive(str("console-log", "enabled")),
			passive(str("cron-from", "warning")),
			passive(str("cron-to", "emerg")),
			passive(str("daemon-from", "notice")),
			passive(str("daemon-to", "emerg")),
			passive(str("description", "none")),
			passive(raw("include")),
			ed("iso-date", "disabled"),
			passive(str("kern-from", "debug")),
			passive(str("kern-to", "emerg")),
			passive(str("local6-from", "notice")),
			passive(str("local6-to", "emerg")),
			passive(str("mail-from", "notice")),
			passive(str("mail-to", "emerg")),
			passive(str("messages-from", "notice")),
			passive(str("messages-to", "warning")),
			passive(str("user-log-from", "notice")),
			passive(str("user-log-to", "emerg")),
		}}
	return []*Kind{sysIfile, ltmIfile, sysDataGroup, ltmDataGroupExternal, syslog}
}

// copyProps copies rows for another kind, which may then set their
// sources and help on its own.
func copyProps(ps []*Prop) []*Prop {
	out := make([]*Prop, len(ps))
	for i, p := range ps {
		c := *p
		out[i] = &c
	}
	return out
}
