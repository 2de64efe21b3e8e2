package capture

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// timespecNs reads a struct timespec (as the kernel writes it in an
// SCM_TIMESTAMPNS control message) and returns it in Unix nanoseconds.
func timespecNs(b []byte) (int64, bool) {
	var ts unix.Timespec
	if len(b) < int(unsafe.Sizeof(ts)) {
		return 0, false
	}
	ts = *(*unix.Timespec)(unsafe.Pointer(&b[0]))
	return ts.Nano(), true
}
