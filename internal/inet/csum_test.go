package inet

import "testing"

// RFC 1071's example words, and an IPv4 header whose checksum is known.
func TestChecksum(t *testing.T) {
	if got := Fold(Sum(0, []byte{0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7})); got != 0xddf2 {
		t.Errorf("RFC 1071 example: sum %#04x, want 0xddf2", got)
	}
	hdr := []byte{0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7}
	if got := Checksum(hdr); got != 0xb861 {
		t.Errorf("IPv4 header checksum %#04x, want 0xb861", got)
	}
	hdr[10], hdr[11] = 0xb8, 0x61
	if Checksum(hdr) != 0 {
		t.Error("a header with its checksum in place must sum to zero")
	}
	if Checksum([]byte{0x01}) != ^uint16(0x0100) {
		t.Error("odd length")
	}
}
