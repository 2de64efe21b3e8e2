package lab

import (
	"log/slog"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/labstate"
)

// DoctorReport is what `emuctl doctor` prints: the kernel, what it and
// the tools can do, the backend each concern gets.
type DoctorReport struct {
	Kernel       string          `json:"kernel"`
	Capabilities []Capability    `json:"capabilities"`
	Tools        []Capability    `json:"tools"`
	Backends     []BackendChoice `json:"backends"`
}

// Capability is one line of `emuctl doctor`.
type Capability struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// BackendChoice is the choice emuctl makes for one concern on this machine.
type BackendChoice struct {
	Concern string `json:"concern"`
	Uses    string `json:"uses"`
	Why     string `json:"why"`
}

// Doctor probes the kernel and the tools emuctl can use, and says which
// backend each concern will get. Probes that need a namespace use a
// throw-away one; nothing on the host changes.
func Doctor() *DoctorReport {
	r := emu.Doctor()
	capability := func(c emu.Capability) Capability { return Capability(c) }
	return &DoctorReport{
		Kernel:       r.Kernel,
		Capabilities: convert(r.Capabilities, capability),
		Tools:        convert(r.Tools, capability),
		Backends:     convert(r.Backends, func(b emu.Backend) BackendChoice { return BackendChoice(b) }),
	}
}

// CleanReport says what Clean removed and what it left alone.
type CleanReport struct {
	Removed []string `json:"removed"` // labs torn down
	Skipped []string `json:"skipped"` // running labs left alone, with why
	Errors  []string `json:"errors,omitempty"`
}

// Clean removes the leftovers of labs that are not running (crashed
// deploys, killed teardowns), found by emuctl's marker, as `emuctl
// clean` does; with all, running labs too. Objects without the marker
// are never touched.
func Clean(all bool, log *slog.Logger) (*CleanReport, error) {
	rep, err := emu.Clean(all, log)
	return (*CleanReport)(rep), err
}

// Leaks lists every object on the host that carries emuctl's marker or
// lives in its run dir (`emuctl clean --check`); a clean machine gives
// nothing.
func Leaks() []string { return emu.Leaks() }

// OVSInfo is the live view of a lab's Open vSwitch part: daemons, the
// socket to point OVS tools at, per bridge its ports, QoS, queues and
// counters (an alias of package labstate's type, which the runtime fills).
type OVSInfo = labstate.OVSInfo

// InspectOVS reads the lab's bridges from its OVSDB and its queues from
// the kernel; nil for a lab without ovs switches.
func InspectOVS(st *State) *OVSInfo { return emu.InspectOVS(st) }

// KernelOVSDatapath reports whether ovs switches get the kernel datapath
// by default on this machine (the openvswitch module is loaded).
func KernelOVSDatapath() bool { return emu.KernelOVSDatapath() }

// SystemOVSAnswers reports whether a system Open vSwitch answers (labs
// then use it instead of starting emuctl's own).
func SystemOVSAnswers() bool { return emu.SystemOVSAnswers() }

// EmbeddedOVSUsers lists the labs using emuctl's embedded Open vSwitch.
func EmbeddedOVSUsers() []string { return emu.EmbeddedOVSUsers() }
