package objects

// ilxKinds are iRules LX: `ilx workspace`, where a plugin's Node.js
// files are written, and `ilx plugin`, a running copy of a workspace
// whose extensions rules call with ILX::call (dataplane/ilx). The
// property lists follow F5's tmsh reference pages of ilx workspace and
// ilx plugin and the iControl REST schema of ilx/plugin/extensions
// (concurrency-mode dedicated, debug ports 20000-65535) [M: max-restarts
// 5 within restart-interval 60 seconds, heartbeat-interval 0,
// trace-level 1, ilx-logging disabled are as remembered from v13-v17,
// not read from a system].
//
// A workspace's extensions and rules are kept as items (`extensions {
// E { } }`), laid out as directories and files by the daemon when tmsh
// creates them (create ilx workspace W extension E); staged-directory
// and version are written by the system, as BIG-IP writes them.
func ilxKinds() []*Kind {
	ws := actOn(pk("ilx workspace", "Workspace", "", tmshRef("ilx workspace"), `
extensions coll
rules coll
node-version str none
staged-directory ro -
version ro -
`), "iRules LX workspace: extensions/NAME/index.js, package.json and node_modules under the state directory's ilx/workspaces, and rules/NAME.tcl; create ilx workspace W extension E lays out an extension",
		"extensions", "rules", "staged-directory", "version")
	ws.Lower = "workspace"
	for _, p := range ws.Props {
		switch p.Name {
		case "extensions":
			p.Help = "the workspace's extensions, each a directory extensions/NAME with index.js (create ilx workspace W extension NAME adds one)"
		case "rules":
			p.Help = "the workspace's iRules, each rules/NAME.tcl (create ilx workspace W rule NAME adds one)"
		case "node-version":
			p.Help = "the Node.js version the workspace is written for (openltm runs the node it finds)"
		}
	}

	pl := actOn(pk("ilx plugin", "Plugin", "", tmshRef("ilx plugin"), `
from-workspace ref ilx+workspace none
disabled flag enabled|disabled
log-publisher ref sys+log-config+publisher none
node-version ro -
staged-directory ro -
`), "iRules LX plugin: a copy of a workspace whose extensions run as Node.js processes that rules reach with ILX::init, ILX::call and ILX::notify",
		"from-workspace", "disabled", "extensions", "staged-directory")
	pl.Lower = "plugin"
	pl.Props = append(pl.Props, help(&Prop{Name: "extensions", Type: TColl, Items: ItemPlain, Sub: &Kind{Title: "Extension", Props: []*Prop{
		help(&Prop{Name: "command-arguments", Type: TList, Inline: true}, "words passed to the extension's node process after index.js"),
		help(&Prop{Name: "command-options", Type: TList, Inline: true}, "options passed to node before index.js"),
		help(enum("concurrency-mode", "dedicated", "dedicated", "single"), "dedicated: a node process per processor, as BIG-IP runs one per TMM; single: one for the whole system"),
		help(&Prop{Name: "data-groups", Type: TList}, "data groups (internal or external) the extension reads with ILXPlugin.getDataGroup as ILXDatagroup objects; a change of their records reaches the running processes"),
		passive(help(&Prop{Name: "debug-port-range-high", Type: TInt, Default: "65535", Max: 65535}, "the highest port of node's debugger (kept; openltm starts no debugger)")),
		passive(help(&Prop{Name: "debug-port-range-low", Type: TInt, Default: "20000", Max: 65535}, "the lowest port of node's debugger (kept; openltm starts no debugger)")),
		help(str("description", "none"), "a description of the extension"),
		passive(help(num("heartbeat-interval", "0"), "seconds between heartbeats to the extension (kept; openltm sees a process's exit at once)")),
		passive(help(ed("ilx-logging", "disabled"), "the extension's own logging (kept; its output goes to ltmd's log)")),
		passive(help(str("log-publisher", "none"), "the publisher of the extension's log (kept; its output goes to ltmd's log)")),
		help(num("max-restarts", "5"), "how many times within restart-interval a process that exits is started again, after which the extension is failed"),
		help(num("restart-interval", "60"), "the seconds over which max-restarts counts restarts"),
		passive(help(num("trace-level", "1"), "the extension's trace level (kept)")),
	}}}, "the plugin's extensions and their settings: extensions { NAME { concurrency-mode single|dedicated max-restarts N restart-interval S ... } }"))
	for _, p := range pl.Props {
		switch p.Name {
		case "from-workspace":
			p.Help = "the workspace whose files the plugin runs (copied when the plugin is created or this is set again)"
		case "disabled":
			p.Help = "disabled stops the plugin's processes; ILX::init fails meanwhile"
		case "log-publisher":
			p.Help = "the publisher of the plugin's log (kept; its output goes to ltmd's log)"
			p.Passive = true
		}
	}
	// ltm profile ilx: a virtual server with one hands each client
	// connection to the plugin's extension that started an ILXPlugin
	// (dataplane/ilx streaming). F5's tmsh reference lists plugin beside
	// the common defaults-from, description and app-service; the
	// built-in /Common/ilx names no plugin.
	prof := actOn(profileKind("ilx", "ilx", `
plugin ref ilx+plugin none
`), "F5 ltm profile ilx: the virtual's client connections are streamed to the plugin's Node.js extension that started an f5.ILXPlugin, which chooses the server (flow.lbSelect, flow.client.allow) and reads and writes both sides",
		"plugin")
	prof.row("plugin").Help = "the ilx plugin whose ILXPlugin takes the virtual's connections (required on a virtual server: none refuses the commit)"
	return []*Kind{ws, pl, prof}
}
