// Package capture records packets from an interface inside a lab node's
// network namespace into a pcapng file, without tcpdump: an AF_PACKET
// socket is opened on a fresh, locked OS thread switched into the
// namespace (the socket stays bound to that namespace afterwards), packets
// are filtered in Go (see packet.Filter) and written with kernel
// nanosecond timestamps and their direction.
//
// It changes nothing on the host: it only opens a socket, reads, and
// writes the caller's writer.
package capture
