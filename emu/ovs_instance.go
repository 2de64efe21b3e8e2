package emu

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/emuctl/emuctl/topo"

	"github.com/emuctl/emuctl/ovs"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// embeddedOVS is emuctl's private pair: /run/emuctl/_ovs (lab names start
// with a letter or digit, so no lab's state dir is called _ovs).
func embeddedOVS() ovs.Embedded {
	return ovs.Embedded{Dir: filepath.Join(RunDir(), embeddedOVSDir), Cleanup: kernelDatapath()}
}

const embeddedOVSDir = "_ovs"

// systemOVSDB is the endpoint of the system Open vSwitch. EMUCTL_OVS_DB
// names another one (an OVS built from source, a test's private server);
// emuctl treats it like the system one: it uses it, never stops it.
func systemOVSDB() (endpoint string, explicit bool) {
	if v := os.Getenv("EMUCTL_OVS_DB"); v != "" {
		if !strings.Contains(v, ":") {
			v = "unix:" + v
		}
		return v, true
	}
	return "unix:" + ovs.SystemDB, false
}

func socketPath(endpoint string) string { return strings.TrimPrefix(endpoint, "unix:") }

// systemOVS reports whether the system OVSDB answers (with an initialised
// database). It changes nothing.
func systemOVS(ctx context.Context) (string, error) {
	ep, _ := systemOVSDB()
	if _, err := os.Stat(socketPath(ep)); err != nil {
		return ep, err
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	c, err := ovs.Dial(ctx, ep)
	if err != nil {
		return ep, err
	}
	defer c.Close()
	return ep, c.Initialized(ctx)
}

// ovsLock serialises starting, choosing and stopping the embedded daemons
// among emuctl processes.
func ovsLock() (func(), error) {
	if err := os.MkdirAll(RunDir(), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(RunDir(), embeddedOVSDir+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(60 * time.Second)
	for unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		if time.Now().After(deadline) {
			f.Close()
			return nil, errors.New("another emuctl process holds the Open vSwitch lock for over 60s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return func() {
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}, nil
}

// acquireOVS picks the Open vSwitch that serves a lab — the system one
// when it answers, else emuctl's embedded pair, started when it is not
// running — and records the choice through record while still holding the
// lock, so a concurrent `down` of the last other lab cannot stop daemons
// this lab is about to use. With own (a local machine of a lab over
// several machines, ownOVS) only the embedded pair will do.
func acquireOVS(ctx context.Context, own bool, record func(*OVSState) error) (*OVSState, error) {
	unlock, err := ovsLock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	ep, explicit := systemOVSDB()
	sysErr := errors.New("not used on a local machine")
	if own {
		explicit = false
	} else if _, sysErr = systemOVS(ctx); sysErr == nil {
		o := &OVSState{DB: ep, RunDir: filepath.Dir(socketPath(ep)), Warning: sendBufferWarning(false)}
		return o, record(o)
	}
	if explicit {
		return nil, fmt.Errorf("EMUCTL_OVS_DB=%s does not answer: %v", ep, sysErr)
	}
	e := embeddedOVS()
	if len(e.Running()) != 2 || pingOVS(ctx, e.Endpoint()) != nil {
		// Remnants of a crashed pair are stopped by pid; its database is
		// dropped (rows of labs that died with it are gone with it).
		if err := stopEmbedded(e, 5*time.Second); err != nil {
			return nil, fmt.Errorf("embedded Open vSwitch: stop remnants: %w", err)
		}
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := startEmbedded(sctx, e)
		if err == nil {
			if werr := widenEmbeddedSendBuffer(sctx, e); werr != nil {
				os.WriteFile(filepath.Join(e.Dir, sndbufFile), []byte("0 "+werr.Error()+"\n"), 0o644)
			}
		}
		cancel()
		if err != nil {
			stopEmbedded(e, 5*time.Second)
			return nil, fmt.Errorf("no Open vSwitch answers at %s, and emuctl's embedded one did not start: %w", socketPath(ep), err)
		}
	}
	o := &OVSState{Embedded: true, DB: e.Endpoint(), RunDir: e.Dir, Warning: sendBufferWarning(true)}
	return o, record(o)
}

// ownOVS reports whether a Spec is a local machine's slice of a lab over
// several machines: a namespace of this host standing in for a machine,
// whose ports a system Open vSwitch (its daemon in the host's namespace)
// cannot attach; the machine runs its own embedded pair, in its own
// namespaces and run directory.
func ownOVS(spec *topo.Spec) bool {
	c := spec.Cluster
	if c == nil || c.Slice == "" {
		return false
	}
	m := c.Machine(c.Slice)
	return m != nil && m.Local()
}

// pingOVS checks that an OVSDB endpoint answers.
func pingOVS(ctx context.Context, ep string) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	c, err := ovs.Dial(ctx, ep)
	if err != nil {
		return err
	}
	c.Close()
	return nil
}

// embeddedUsers lists the labs (other than except) whose state says they
// use the embedded pair.
func embeddedUsers(except string) []string {
	var out []string
	states, _ := Labs()
	for _, st := range states {
		if st.Lab != except && st.OVS != nil && st.OVS.Embedded {
			out = append(out, st.Lab)
		}
	}
	return out
}

// releaseEmbeddedOVS stops the embedded pair when no lab other than lab
// uses it any more.
func releaseEmbeddedOVS(lab string) (bool, error) {
	unlock, err := ovsLock()
	if err != nil {
		return false, err
	}
	defer unlock()
	if users := embeddedUsers(lab); len(users) > 0 {
		return false, nil
	}
	e := embeddedOVS()
	if _, err := os.Stat(e.Dir); errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return true, stopEmbedded(e, 10*time.Second)
}

// ovs-vswitchd's userspace datapath makes persistent tap devices (the
// datapath's own "ovs-netdev" and one per bridge) and leaves them behind
// when it exits before the bridge rows are deleted (a killed up, a stopped
// remnant). Before the embedded pair could make one, its name goes on a
// line of tapsMine in the pair's dir, as do the prime veths' (unmarked for
// a moment after creation); after the pair stops, the listed devices that
// are taps, or veths unmarked or marked "emuctl:_ovs", are deleted, with
// any other veth so marked (made only under the OVS lock, which the stop
// holds).
const (
	netdevTap = "ovs-netdev"
	tapsMine  = "taps.mine"
)

// claimTap records that the embedded pair is about to make device name.
func claimTap(e ovs.Embedded, name string) error {
	if err := os.MkdirAll(e.Dir, 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(e.Dir, tapsMine), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteString(name + "\n")
	return err
}

func startEmbedded(ctx context.Context, e ovs.Embedded) error {
	if _, err := netlink.LinkByName(netdevTap); err != nil {
		if err := claimTap(e, netdevTap); err != nil {
			return err
		}
	}
	return e.Start(ctx, nil)
}

// stopEmbedded stops the pair and deletes the devices it left that were
// its own.
func stopEmbedded(e ovs.Embedded, timeout time.Duration) error {
	b, _ := os.ReadFile(filepath.Join(e.Dir, tapsMine))
	if err := e.Stop(timeout); err != nil {
		return err
	}
	var errs []string
	for _, name := range strings.Fields(string(b)) {
		l, err := netlink.LinkByName(name)
		if err != nil {
			continue
		}
		a := l.Attrs().Alias
		if l.Type() == "tuntap" || l.Type() == "veth" && (a == "" || a == markerPrefix+embeddedOVSDir) {
			if err := netlink.LinkDel(l); err != nil && !errors.Is(err, unix.ENODEV) {
				errs = append(errs, fmt.Sprintf("delete %s left by the embedded ovs-vswitchd: %v", name, err))
			}
		}
	}
	for _, l := range rootLinks() {
		if l.Attrs().Alias == markerPrefix+embeddedOVSDir {
			if err := netlink.LinkDel(l); err != nil && !errors.Is(err, unix.ENODEV) { // a veth's peer goes with it
				errs = append(errs, fmt.Sprintf("delete %s: %v", l.Attrs().Name, err))
			}
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}
