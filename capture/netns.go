package capture

import "github.com/emuctl/emuctl/internal/nsutil"

// inNetns runs fn inside the network namespace mounted at path ("" runs fn
// in the caller's namespace); see nsutil.Do.
func inNetns(path string, fn func() error) error { return nsutil.DoPath(path, fn) }
