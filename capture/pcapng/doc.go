// Package pcapng reads and writes packet captures in the pcapng format
// (draft-ietf-opsawg-pcapng) that Wireshark and tshark open, and reads
// classic libpcap files too. It is a pure file-format package: no sockets,
// no cgo, no allocation per packet when reading.
package pcapng
