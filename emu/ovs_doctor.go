package emu

import (
	"context"
	"fmt"
	"strings"

	"github.com/emuctl/emuctl/ovs"
)

// ovsBackends says which Open vSwitch serves ovs switches on this machine,
// where its database socket is, and which datapath switches get.
func ovsBackends() []Backend {
	var out []Backend
	ep, explicit := systemOVSDB()
	e := embeddedOVS()
	running := e.Running()
	sysErr := func() error { _, err := systemOVS(context.Background()); return err }()
	switch {
	case sysErr == nil:
		why := "an ovsdb-server answers at " + socketPath(ep) + ": it is used as is; emuctl only adds and removes rows carrying its lab markers"
		if explicit {
			why = "EMUCTL_OVS_DB names it: it is used as is"
		}
		if len(running) > 0 {
			why += fmt.Sprintf("; emuctl's embedded pair (pids %s) also runs for older labs: stop them before relying on the kernel datapath, two ovs-vswitchd in one namespace fight over it", daemonPIDs(running))
		}
		out = append(out, Backend{"switch (type: ovs)", "system Open vSwitch, db " + ep, why})
	case explicit:
		out = append(out, Backend{"switch (type: ovs)", "unavailable", fmt.Sprintf("EMUCTL_OVS_DB=%s does not answer: %v", ep, sysErr)})
	case len(running) > 0:
		users := embeddedUsers("")
		out = append(out, Backend{"switch (type: ovs)", "emuctl's embedded Open vSwitch, db " + e.Endpoint(),
			fmt.Sprintf("no system Open vSwitch answers at %s; the embedded ovsdb-server + ovs-vswitchd (pids %s) run in the root namespace with database, sockets and logs in %s, for labs %s, and stop with the last of them", socketPath(ep), daemonPIDs(running), e.Dir, orNone(strings.Join(users, ", ")))})
	default:
		if _, err := ovs.Binaries(); err != nil {
			out = append(out, Backend{"switch (type: ovs)", "unavailable", err.Error()})
		} else {
			out = append(out, Backend{"switch (type: ovs)", "emuctl's embedded Open vSwitch, started on demand",
				fmt.Sprintf("no system Open vSwitch answers at %s; `up` starts a private ovsdb-server + ovs-vswitchd (database, sockets, logs in %s, db %s) and the last `down` stops them", socketPath(ep), e.Dir, e.Endpoint())})
		}
	}
	if kernelDatapath() {
		out = append(out, Backend{"OVS datapath", "kernel (datapath_type system)", "the openvswitch module is loaded; a switch may pin datapath: netdev"})
	} else {
		out = append(out, Backend{"OVS datapath", "userspace (datapath_type netdev)",
			"no openvswitch kernel module; emuctl turns TX checksum offload off on the veths that send into OVS ports (TCP breaks otherwise); datapath: kernel is refused"})
	}
	return out
}

func daemonPIDs(ds []ovs.Daemon) string {
	var s []string
	for _, d := range ds {
		s = append(s, fmt.Sprintf("%s %d", d.Name, d.PID))
	}
	return strings.Join(s, ", ")
}

// KernelOVSDatapath reports whether ovs switches get the kernel datapath
// by default on this machine (the openvswitch module is loaded).
func KernelOVSDatapath() bool { return kernelDatapath() }

// SystemOVSAnswers reports whether a system Open vSwitch answers (emuctl
// then uses it instead of starting its own).
func SystemOVSAnswers() bool {
	_, err := systemOVS(context.Background())
	return err == nil
}

// EmbeddedOVSUsers lists the labs using emuctl's embedded Open vSwitch.
func EmbeddedOVSUsers() []string { return embeddedUsers("") }
