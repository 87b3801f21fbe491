package mrf

import "os"

// timeoutErr is what a read past its deadline returns.
var timeoutErr = os.ErrDeadlineExceeded
