package sockinfo

import (
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// RxTimeOOB is the control buffer RxTime needs: one SCM_TIMESTAMPNS
// message.
var RxTimeOOB = unix.CmsgSpace(16)

// RxTime returns the kernel's receive timestamp (SCM_TIMESTAMPNS, a
// CLOCK_REALTIME struct timespec, on a socket with SO_TIMESTAMPNS set) in
// Unix nanoseconds from a recvmsg control buffer, and whether there was
// one. It is when the packet arrived, not when a reader held off the CPU
// got to it.
func RxTime(oob []byte) (int64, bool) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return 0, false
	}
	for _, m := range msgs {
		if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SCM_TIMESTAMPNS && len(m.Data) >= 16 {
			sec := int64(binary.NativeEndian.Uint64(m.Data[0:8]))
			nsec := int64(binary.NativeEndian.Uint64(m.Data[8:16]))
			return sec*1e9 + nsec, true
		}
	}
	return 0, false
}
