package emu

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/emuctl/emuctl/internal/nsutil"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// NetnsDir is where named namespaces are bind-mounted, as iproute2 does.
const NetnsDir = "/run/netns"

// hostNetns is the network namespace emuctl started in, taken during
// package initialisation while the main goroutine still runs on the main
// thread. /proc/self/ns/net cannot be used later: a namespace-creating
// goroutine may have ended on the main thread, which the runtime then parks
// in that namespace instead of destroying.
var hostNetns, _ = netns.Get()

// do runs fn inside ns; see nsutil.Do.
func do(ns netns.NsHandle, fn func() error) error { return nsutil.Do(ns, fn) }

// ensureNetnsDir makes /run/netns a shared mount point, exactly as iproute2
// does, so namespaces mounted there propagate to other mount namespaces and
// `ip netns` sees them.
func ensureNetnsDir() error {
	if err := os.MkdirAll(NetnsDir, 0o755); err != nil {
		return err
	}
	err := unix.Mount("", NetnsDir, "none", unix.MS_SHARED|unix.MS_REC, "")
	if err == nil {
		return nil
	}
	if !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("make %s shared: %w", NetnsDir, err)
	}
	if err := unix.Mount(NetnsDir, NetnsDir, "none", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s: %w", NetnsDir, err)
	}
	if err := unix.Mount("", NetnsDir, "none", unix.MS_SHARED|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("make %s shared: %w", NetnsDir, err)
	}
	return nil
}

// netnsAnchor is the one file every /run/netns file of a deploy is a hard
// link to. A link is made atomically with its name, and its inode is the
// anchor's, recorded in the lab's journal before any link exists: so a
// namespace file left unmounted by a kill (between link and mount, or
// between unmount and unlink in teardown) is provably the lab's, and a
// same-named file emuctl did not make never is. Links are also ~100x
// cheaper than creating an inode per namespace on some tmpfs set-ups
// (measured here: 12 µs vs 1 ms).
type netnsAnchor struct {
	path string
	id   fileID
}

// newNetnsAnchor makes the anchor /run/netns/.emuctl-<lab>-<tag>,
// journalling its name before and its inode after.
func newNetnsAnchor(lab, tag string, j *journal) (*netnsAnchor, error) {
	a := &netnsAnchor{path: filepath.Join(NetnsDir, ".emuctl-"+lab+"-"+tag)}
	if err := j.add("anchor", a.path); err != nil {
		return nil, err
	}
	fd, err := unix.Open(a.path, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0o444)
	if err != nil {
		return nil, fmt.Errorf("namespace anchor %s: %w", a.path, err)
	}
	crashPoint("netns-anchor")
	// The content is a marker too: an unmounted file that reads so is
	// the lab's even when its state dir (and journal) is lost.
	if _, err := unix.Write(fd, []byte(anchorContent(lab))); err != nil {
		unix.Close(fd)
		os.Remove(a.path)
		return nil, err
	}
	var st unix.Stat_t
	err = unix.Fstat(fd, &st)
	unix.Close(fd)
	if err != nil {
		os.Remove(a.path)
		return nil, err
	}
	a.id = fileID{st.Dev, st.Ino}
	if err := j.add("anchor-ino", fmt.Sprint(st.Dev), fmt.Sprint(st.Ino)); err != nil {
		os.Remove(a.path)
		return nil, err
	}
	return a, nil
}

func anchorContent(lab string) string { return "emuctl-netns-anchor " + Marker(lab) + "\n" }

// anchorLab reads an unmounted /run/netns file and returns the lab its
// anchor content names.
func anchorLab(path string) (string, bool) {
	var fs unix.Statfs_t
	var st unix.Stat_t
	if unix.Lstat(path, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size > 256 ||
		unix.Statfs(path, &fs) != nil || fs.Type == unix.NSFS_MAGIC {
		return "", false
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	rest, ok := strings.CutPrefix(string(b), "emuctl-netns-anchor ")
	if !ok || !strings.HasSuffix(rest, "\n") {
		return "", false
	}
	return labFromMarker(strings.TrimSuffix(rest, "\n"))
}

// remove drops the anchor's own name; the links keep the inode.
func (a *netnsAnchor) remove() {
	if a != nil {
		os.Remove(a.path)
	}
}

// crashPoint ends the process like kill -9 when a test asks for it there
// (crashAt): each place where a host object exists before its marker or
// journal line is one. A test-only crash hook: outside tests crashAt is
// empty and it does nothing.
func crashPoint(name string) {
	if crashAt == name {
		os.Exit(9)
	}
}

// createNamedNetns creates a network namespace, marks its loopback with the
// lab marker and brings it up, and only then bind-mounts it at
// /run/netns/<name> (a hard link to the deploy's anchor): a named
// namespace from emuctl always carries the marker, and its file is known by
// its inode before it is mounted. It returns an open handle to the
// namespace and a netlink handle whose socket lives in it (opened from
// inside, which is cheaper than NewHandleAt's thread switching).
func createNamedNetns(name, marker string, anchor *netnsAnchor) (netns.NsHandle, *netlink.Handle, error) {
	path := filepath.Join(NetnsDir, name)
	type result struct {
		ns  netns.NsHandle
		h   *netlink.Handle
		err error
	}
	ch := make(chan result, 1)
	go func() {
		// This thread is never unlocked: after unshare it belongs to the new
		// namespace, and the runtime destroys it when the goroutine exits.
		runtime.LockOSThread()
		fail := func(err error) { ch <- result{-1, nil, err} }
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			fail(fmt.Errorf("unshare: %w", err))
			return
		}
		h, err := netlink.NewHandle(unix.NETLINK_ROUTE)
		if err != nil {
			fail(err)
			return
		}
		lo, err := h.LinkByName("lo")
		if err == nil {
			err = h.LinkSetAlias(lo, marker)
		}
		if err == nil {
			err = h.LinkSetUp(lo)
		}
		if err != nil {
			h.Close()
			fail(fmt.Errorf("mark loopback: %w", err))
			return
		}
		if err := unix.Link(anchor.path, path); err != nil {
			h.Close()
			if errors.Is(err, unix.EEXIST) {
				err = os.ErrExist
			}
			fail(fmt.Errorf("namespace %s: %w", name, err))
			return
		}
		crashPoint("netns-linked")
		if err := unix.Mount("/proc/thread-self/ns/net", path, "none", unix.MS_BIND, ""); err != nil {
			h.Close()
			os.Remove(path)
			fail(fmt.Errorf("bind namespace %s: %w", name, err))
			return
		}
		fd, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			h.Close()
			fail(err)
			return
		}
		ch <- result{netns.NsHandle(fd), h, nil}
	}()
	r := <-ch
	return r.ns, r.h, r.err
}

// deleteNamedNetns unmounts and removes /run/netns/<name>. Not found is done.
func deleteNamedNetns(name string) error {
	path := filepath.Join(NetnsDir, name)
	if err := unix.Unmount(path, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("unmount %s: %w", path, err)
	}
	crashPoint("teardown-unmounted")
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// netnsMarker returns the alias of the loopback in the named namespace, or
// "" when the namespace does not exist or is not readable.
func netnsMarker(name string) (string, error) {
	h, err := netns.GetFromPath(filepath.Join(NetnsDir, name))
	if err != nil {
		return "", err
	}
	defer h.Close()
	nh, err := netlink.NewHandleAt(h, unix.NETLINK_ROUTE)
	if err != nil {
		return "", err
	}
	defer nh.Close()
	lo, err := nh.LinkByName("lo")
	if err != nil {
		return "", err
	}
	return lo.Attrs().Alias, nil
}

// Marker is the ownership marker emuctl writes on every object of a lab.
func Marker(lab string) string { return markerPrefix + lab }

const markerPrefix = "emuctl:"

// labFromMarker returns the lab a marker names, and whether it is one.
func labFromMarker(alias string) (string, bool) {
	if !strings.HasPrefix(alias, markerPrefix) {
		return "", false
	}
	rest := strings.TrimPrefix(alias, markerPrefix)
	if i := strings.IndexByte(rest, ' '); i >= 0 {
		rest = rest[:i]
	}
	return rest, rest != ""
}

// listNetns returns the names under /run/netns.
func listNetns() ([]string, error) {
	ents, err := os.ReadDir(NetnsDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out, nil
}

// nsInode returns the inode identifying a namespace file.
func nsInode(path string) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
}

// InNode runs fn on a fresh OS thread inside a node's network namespace:
// sockets opened in fn belong to the node and may be used from any
// goroutine afterwards.
func InNode(lab, node string, fn func() error) error {
	h, err := netns.GetFromPath(filepath.Join(NetnsDir, lab+"."+node))
	if err != nil {
		if cerr := clusterNodeErr(lab, node); cerr != nil {
			return cerr
		}
		return fmt.Errorf("node %s of lab %s: %w", node, lab, err)
	}
	defer h.Close()
	return do(h, fn)
}
