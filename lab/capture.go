package lab

import (
	"context"
	"io"

	"github.com/emuctl/emuctl/capture"
	"github.com/emuctl/emuctl/emu"
)

// CaptureNode records packets on a node's interface to w as pcapng, as
// `emuctl capture` does, wherever the node runs (a lab over several
// machines: on the node's machine). Ending ctx ends the capture, and the
// file is complete either way.
func CaptureNode(ctx context.Context, st *State, node, iface string, o capture.Options, w io.Writer) (capture.Stats, error) {
	return emu.CaptureNode(ctx, st, node, iface, o, w)
}

// CaptureMedium writes every PPDU on the Wi-Fi medium of the lab called
// name to w as pcapng with radiotap headers until ctx ends; the capture
// is complete when it returns.
func CaptureMedium(ctx context.Context, name string, w io.Writer, snaplen int) error {
	return emu.CaptureMedium(ctx, name, w, snaplen)
}
