package emu

import "github.com/emuctl/emuctl/labstate"

// A lab's recorded state and the live views built from it are data
// types of package labstate (so package lab and its clients can name them
// without naming the runtime); emu uses them under their old names.
type (
	State          = labstate.State
	ExtState       = labstate.ExtState
	Proc           = labstate.Proc
	LinkState      = labstate.LinkState
	LinkInfo       = labstate.LinkInfo
	QueueLimit     = labstate.QueueLimit
	OVSState       = labstate.OVSState
	OVSBridgeState = labstate.OVSBridgeState
	OVSPortState   = labstate.OVSPortState
	OVSInfo        = labstate.OVSInfo
	QueueStats     = labstate.QueueStats
	MediumState    = labstate.MediumState
	WiFiHop        = labstate.WiFiHop
	WiFiNodeStatus = labstate.WiFiNodeStatus
	MLDStatus      = labstate.MLDStatus
	MLDLink        = labstate.MLDLink
	MediumNode     = labstate.MediumNode
	MediumChannel  = labstate.MediumChannel
	AdhocPeer      = labstate.AdhocPeer
	UnderlayPath   = labstate.UnderlayPath
)

// Lab status values (State.Status).
const (
	StatusDeploying = labstate.StatusDeploying
	StatusUp        = labstate.StatusUp
	StatusDown      = labstate.StatusDown
)

// Link backends, as recorded in State.Links and shown by inspect.
const (
	BackendNetem  = labstate.BackendNetem
	BackendShaper = labstate.BackendShaper
	BackendEngine = labstate.BackendEngine
)
