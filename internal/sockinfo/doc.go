// Package sockinfo reads the MPTCP state of a connected socket with
// getsockopt at level SOL_MPTCP (include/uapi/linux/mptcp.h), which
// x/sys/unix does not wrap:
//
//   - MPTCP_INFO (Linux 5.16+): the connection-level struct mptcp_info
//     ([ReadInfo]);
//   - MPTCP_FULL_INFO (6.5+): mptcp_info plus, per subflow, its id, its
//     local and remote addresses and its tcp_info ([ReadFullInfo]);
//   - MPTCP_TCPINFO (5.16+): per subflow only its tcp_info, what
//     [ReadSubflows] uses on kernels without MPTCP_FULL_INFO.
//
// The structures grew over kernel versions (mptcp_info: bytes_* in 6.5,
// subflows_total in 6.8, last_* in 6.10; tcp_info gains fields often).
// The kernel copies the smaller of its size and ours and reports the
// element sizes it used, so decoding here follows the sizes the kernel
// reported: fields a kernel does not have stay zero, and array elements
// are read at the kernel's stride rather than at sizeof of our structs.
//
// A socket that is not, or no longer, MPTCP (it fell back to plain TCP)
// makes every reader return [ErrFallback].
//
// The decoding is kept apart from the system calls (decode.go vs
// read.go) so that it can be tested on byte slices.
package sockinfo
