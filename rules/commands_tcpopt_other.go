//go:build !linux

package rules

import "net/netip"

func tcpDetail(fd int) (tcpExtra, error)      { return tcpExtra{}, errNoSockopt }
func getKeepalive(fd int) (int, error)        { return 0, errNoSockopt }
func setKeepalive(fd, secs int) error         { return errNoSockopt }
func getCongestion(fd int) (string, error)    { return "", errNoSockopt }
func setCongestion(fd int, name string) error { return errNoSockopt }
func setQuickAck(fd int, on bool) error       { return errNoSockopt }
func getBuf(fd int, send bool) (int, error)   { return 0, errNoSockopt }
func setBuf(fd int, send bool, n int) error   { return errNoSockopt }
func getWindowClamp(fd int) (int, error)      { return 0, errNoSockopt }
func getNoDelay(fd int) (bool, error)         { return false, errNoSockopt }
func getPacing(fd int) (bool, error)          { return false, errNoSockopt }
func setPacing(fd int, on bool) error         { return errNoSockopt }
func systemUptime() (int64, error)            { return 0, errNoSockopt }

func getPriority(fd int) (int, error)                      { return 0, errNoSockopt }
func setPriority(fd, n int) error                          { return errNoSockopt }
func getNotSentLowat(fd int) (int, error)                  { return 0, errNoSockopt }
func setNotSentLowat(fd, n int) error                      { return errNoSockopt }
func unsentBytes(fd int) (int, error)                      { return 0, errNoSockopt }
func unusedPortOf(netip.Addr, int, int, bool) (int, error) { return 0, errNoSockopt }
func routeMTU(netip.AddrPort) (int, error)                 { return 0, errNoSockopt }
