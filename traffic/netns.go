package traffic

import (
	"fmt"
	"path/filepath"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/internal/nsutil"
	"github.com/emuctl/emuctl/topo"
)

// inNode runs fn inside a node's network namespace (see nsutil.Do).
func inNode(lab, node string, fn func() error) error {
	path := filepath.Join(emu.NetnsDir, topo.Namespace(lab, node))
	if err := nsutil.DoPath(path, fn); err != nil {
		return fmt.Errorf("node %s: %w", node, err)
	}
	return nil
}
