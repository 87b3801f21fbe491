package daemon

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/grammar"
	"github.com/openltm/openltm/objects"
)

var (
	monitorExternal    = schema.MustKind("ltm monitor external")
	externalRun        = monitorExternal.MustProp("run")
	externalArgs       = monitorExternal.MustProp("args")
	externalUser       = monitorExternal.MustProp("user-defined")
	monitorInband      = schema.MustKind("ltm monitor inband")
	inbandFailures     = monitorInband.MustProp("failures")
	inbandFailInterval = monitorInband.MustProp("failure-interval")
	inbandResponseTime = monitorInband.MustProp("response-time")
	inbandRetryTime    = monitorInband.MustProp("retry-time")
	sysExternalMonitor = schema.MustKind("sys file external-monitor")
	specExternalFile   = schema.MustSpec("sys file external-monitor")
)

// monitorExt fills the settings of the monitors with their own kinds of
// settings (external, inband, the login monitors, radius, postgresql,
// mysql, mssql, sip, ldap, scripted, gtm gtp, and in translate_monitors_app.go
// soap, rpc, diameter and mqtt; tcp-echo has none); false means the
// monitor was left out (t.skip or t.keep says why).
func (t *translator) monitorExt(o *objects.Object, typ dataplane.MonitorType, m *dataplane.Monitor) bool {
	e := func(p *objects.Prop) string { return p.Effective(t.cfg, o) }
	ne := func(p *objects.Prop) string { return noneEmpty(e(p)) } // BIG-IP's none as ""
	switch typ {
	case dataplane.MonitorInband:
		m.Inband = &dataplane.InbandMonitor{Failures: atoi(e(inbandFailures)), FailureInterval: seconds(e(inbandFailInterval)),
			ResponseTime: seconds(e(inbandResponseTime)), RetryTime: seconds(e(inbandRetryTime))}
	case dataplane.MonitorExternal:
		run := ne(externalRun)
		if run == "" {
			if !o.BuiltIn {
				t.keep(o, "an external monitor without run has nothing to execute; not run")
			}
			return false
		}
		f := t.cfg.Lookup(t.s, specExternalFile, objects.FullPath(folderOf(o.Name), run))
		if f == nil {
			t.skip(o, "sys file external-monitor %s was not found", run)
			return false
		}
		path, err := t.sslFilePath(f)
		if err != nil {
			t.skip(o, "%v", err)
			return false
		}
		env, err := userDefined(t.cfg.Effective(o, externalUser.Name))
		if err != nil {
			t.skip(o, "%v", err)
			return false
		}
		m.External = &dataplane.ExternalMonitor{Path: path, RunName: f.Name, Args: ne(externalArgs), Env: env}
	case dataplane.MonitorSMTP, dataplane.MonitorPOP3, dataplane.MonitorIMAP, dataplane.MonitorFTP, dataplane.MonitorNNTP:
		m.Login = t.monitorLogin(o, typ)
	case dataplane.MonitorRADIUS, dataplane.MonitorRADIUSAcct:
		r := &dataplane.RADIUSMonitor{Secret: ne(radiusSecret), Username: ne(radiusUsername), Password: ne(radiusPassword)}
		if a := ne(radiusNAS); a != "" {
			ip, err := netip.ParseAddr(a)
			if err != nil {
				t.skip(o, "nas-ip-address %q is not an IP address", a)
				return false
			}
			r.NASIP = ip
		}
		m.RADIUS = r
	case dataplane.MonitorPostgreSQL, dataplane.MonitorMySQL, dataplane.MonitorMSSQL:
		db := &dataplane.DBMonitor{Username: ne(dbUsername), Password: ne(dbPassword), Database: ne(dbDatabase),
			Send: ne(dbSend), Recv: ne(dbRecv)}
		for _, f := range []struct {
			p  *objects.Prop
			to *int
		}{{dbRecvRow, &db.RecvRow}, {dbRecvColumn, &db.RecvColumn}} {
			if v := ne(f.p); v != "" {
				n, err := strconv.Atoi(v)
				if err != nil || n < 1 {
					t.skip(o, "%s %q is not a number from 1", f.p.Name, v)
					return false
				}
				*f.to = n
			}
		}
		if v := ne(dbCount); v != "" && v != "0" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				t.skip(o, "count %q is not a number from 0", v)
				return false
			}
			db.Count = n
		}
		m.DB = db
	case dataplane.MonitorScripted:
		file := ne(scriptedFilename)
		if file == "" {
			if !o.BuiltIn {
				t.keep(o, "a scripted monitor without filename has no script to run; not run")
			}
			return false
		}
		script, err := readMonitorScript(file)
		if err != nil {
			t.skip(o, "%v", err)
			return false
		}
		m.Script = script
	case dataplane.MonitorSIP:
		sip, err := t.sipMonitor(o)
		if err != nil {
			t.skip(o, "%v", err)
			return false
		}
		m.SIP = sip
	case dataplane.MonitorSOAP, dataplane.MonitorRPC, dataplane.MonitorDiameter, dataplane.MonitorMQTT:
		return t.appMonitor(o, typ, m) // translate_monitors_app.go
	case dataplane.MonitorGTP:
		m.GTPVersion = atoi(e(gtpVersion)) // translate_gslb_monitors.go
	case dataplane.MonitorSNMPDCA, dataplane.MonitorSNMPDCABase:
		return t.snmpMonitor(o, typ, m) // translate_monitors_snmp.go
	case dataplane.MonitorLDAP:
		m.LDAP = &dataplane.LDAPMonitor{Base: ne(ldapBase), Filter: ne(ldapFilter), Username: ne(mailUsername), Password: ne(mailPassword),
			Security: ne(ldapSecurity), MandatoryAttributes: ne(ldapMandatory) == "yes", ChaseReferrals: ne(ldapChase) != "no"}
	}
	return true
}

// The smtp, pop3, imap and ftp monitors' own settings.
var (
	monitorSMTP   = schema.MustKind("ltm monitor smtp")
	monitorPOP3   = schema.MustKind("ltm monitor pop3")
	monitorIMAP   = schema.MustKind("ltm monitor imap")
	monitorFTP    = schema.MustKind("ltm monitor ftp")
	smtpDomain    = monitorSMTP.MustProp("domain")
	imapFolder    = monitorIMAP.MustProp("folder")
	ftpFilename   = monitorFTP.MustProp("filename")
	ftpMode       = monitorFTP.MustProp("mode")
	monitorNNTP   = schema.MustKind("ltm monitor nntp")
	nntpNewsgroup = monitorNNTP.MustProp("newsgroup")
	mailUsername  = common("username", monitorPOP3, monitorIMAP, monitorFTP, monitorNNTP, monitorLDAP)
	mailPassword  = common("password", monitorPOP3, monitorIMAP, monitorFTP, monitorNNTP, monitorLDAP)

	monitorLDAP   = schema.MustKind("ltm monitor ldap")
	ldapBase      = monitorLDAP.MustProp("base")
	ldapFilter    = monitorLDAP.MustProp("filter")
	ldapSecurity  = monitorLDAP.MustProp("security")
	ldapMandatory = monitorLDAP.MustProp("mandatory-attributes")
	ldapChase     = monitorLDAP.MustProp("chase-referrals")

	monitorSIP   = schema.MustKind("ltm monitor sip")
	sipMode      = monitorSIP.MustProp("mode")
	sipRequest   = monitorSIP.MustProp("request")
	sipHeaders   = monitorSIP.MustProp("headers")
	sipFilter    = monitorSIP.MustProp("filter")
	sipFilterNeg = monitorSIP.MustProp("filter-neg")

	monitorPostgreSQL = schema.MustKind("ltm monitor postgresql")
	monitorMySQL      = schema.MustKind("ltm monitor mysql")
	monitorMSSQL      = schema.MustKind("ltm monitor mssql")
	dbUsername        = common("username", monitorPostgreSQL, monitorMySQL, monitorMSSQL)
	dbPassword        = common("password", monitorPostgreSQL, monitorMySQL, monitorMSSQL)
	dbDatabase        = common("database", monitorPostgreSQL, monitorMySQL, monitorMSSQL)
	dbSend            = common("send", monitorPostgreSQL, monitorMySQL, monitorMSSQL)
	dbRecv            = common("recv", monitorPostgreSQL, monitorMySQL, monitorMSSQL)
	dbRecvRow         = common("recv-row", monitorPostgreSQL, monitorMySQL, monitorMSSQL)
	dbRecvColumn      = common("recv-column", monitorPostgreSQL, monitorMySQL, monitorMSSQL)
	dbCount           = common("count", monitorPostgreSQL, monitorMySQL, monitorMSSQL)

	monitorTCPEcho   = schema.MustKind("ltm monitor tcp-echo")
	monitorScripted  = schema.MustKind("ltm monitor scripted")
	scriptedFilename = monitorScripted.MustProp("filename")

	monitorRADIUS     = schema.MustKind("ltm monitor radius")
	monitorRADIUSAcct = schema.MustKind("ltm monitor radius-accounting")
	radiusSecret      = common("secret", monitorRADIUS, monitorRADIUSAcct)
	radiusUsername    = common("username", monitorRADIUS, monitorRADIUSAcct)
	radiusPassword    = common("password", monitorRADIUS, monitorRADIUSAcct)
	radiusNAS         = common("nas-ip-address", monitorRADIUS, monitorRADIUSAcct)
)

// sipMonitor reads a sip monitor's request and filters; a filter is a
// list of status codes (100-699) separated by spaces or commas [M].
func (t *translator) sipMonitor(o *objects.Object) (*dataplane.SIPMonitor, error) {
	e := func(p *objects.Prop) string { return noneEmpty(p.Effective(t.cfg, o)) }
	codes := func(p *objects.Prop) ([]int, error) {
		var out []int
		for _, f := range strings.FieldsFunc(e(p), func(r rune) bool { return r == ' ' || r == ',' }) {
			n, err := strconv.Atoi(f)
			if err != nil || n < 100 || n > 699 {
				return nil, fmt.Errorf("%s: %q is not a SIP status code (100-699)", p.Name, f)
			}
			out = append(out, n)
		}
		return out, nil
	}
	s := &dataplane.SIPMonitor{Mode: e(sipMode), Request: e(sipRequest), Headers: e(sipHeaders)}
	var err error
	if s.Filter, err = codes(sipFilter); err != nil {
		return nil, err
	}
	if s.FilterNeg, err = codes(sipFilterNeg); err != nil {
		return nil, err
	}
	return s, nil
}

// monitorLogin reads what an smtp, pop3, imap or ftp monitor says to
// the member.
func (t *translator) monitorLogin(o *objects.Object, typ dataplane.MonitorType) *dataplane.MonitorLogin {
	e := func(p *objects.Prop) string { return noneEmpty(p.Effective(t.cfg, o)) }
	l := &dataplane.MonitorLogin{}
	switch typ {
	case dataplane.MonitorSMTP:
		l.Domain = e(smtpDomain)
		return l
	case dataplane.MonitorIMAP:
		l.Folder = e(imapFolder)
	case dataplane.MonitorFTP:
		l.Filename = e(ftpFilename)
		l.Port = e(ftpMode) == "port"
	case dataplane.MonitorNNTP:
		l.Newsgroup = e(nntpNewsgroup)
	}
	l.Username, l.Password = e(mailUsername), e(mailPassword)
	return l
}

// userDefined reads `user-defined { NAME value ... }`: the variables an
// external monitor's program gets in its environment.
func userDefined(v *objects.Value) (map[string]string, error) {
	if v == nil || strings.TrimSpace(v.Str) == "" || v.Str == "none" {
		return nil, nil
	}
	f, err := grammar.Parse("user-defined", []byte("x "+v.Str))
	if err != nil || len(f.Statements) != 1 || len(f.Statements[0].Items) != 2 {
		return nil, fmt.Errorf("user-defined is not a { NAME value ... } block")
	}
	b, ok := f.Statements[0].Items[1].(*grammar.Block)
	if !ok {
		return nil, fmt.Errorf("user-defined is not a { NAME value ... } block")
	}
	ws := grammar.Texts(b.Items)
	if len(ws)%2 != 0 {
		return nil, fmt.Errorf("user-defined: variable %s has no value", ws[len(ws)-1])
	}
	env := map[string]string{}
	for i := 0; i < len(ws); i += 2 {
		name := ws[i]
		if name == "" || strings.ContainsAny(name, "= \t") || (name[0] >= '0' && name[0] <= '9') {
			return nil, fmt.Errorf("user-defined: %q is not a variable name", name)
		}
		env[name] = ws[i+1]
	}
	return env, nil
}
