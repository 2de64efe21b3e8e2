// Package packet decodes just enough of a captured frame — link layer,
// IPv4/IPv6 and the TCP/UDP header — for capture filters and ACK
// accounting, without allocating. It is pure and reads only the bytes it
// is given.
package packet
