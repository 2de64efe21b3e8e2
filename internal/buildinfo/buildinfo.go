// Package buildinfo says which emuctl binary this is: its version, the
// VCS revision it was built from, the Go version and the platform. The
// CLI prints it (`emuctl version`) and result files record it, so both
// name the same build. It only reads what the binary carries.
//
// Go stamps vcs.revision, vcs.time and vcs.modified into a binary built in
// a git checkout unless -buildvcs=false (which a GOFLAGS setting can make
// the default); the Makefile therefore also passes them with -ldflags -X,
// which win over the stamped values:
//
//	go build -ldflags "-X github.com/emuctl/emuctl/internal/buildinfo.Version=v0.3.0 \
//	  -X github.com/emuctl/emuctl/internal/buildinfo.Revision=$(git rev-parse HEAD)" ./cmd/emuctl
package buildinfo

import (
	"runtime"
	"runtime/debug"
)

// Set with -ldflags -X (strings only); empty means "take it from the
// build information".
var (
	// Version is the release name, e.g. v0.3.0 or a git describe. Unset,
	// it is the module version Go recorded (go install ...@v0.3.0), or
	// "dev" for a build from a checkout.
	Version string
	// Revision is the full commit hash.
	Revision string
	// RevisionTime is the commit time, RFC 3339.
	RevisionTime string
	// Modified is "true" when the work tree had uncommitted changes.
	Modified string
)

// DevVersion is the version of a build that was given none.
const DevVersion = "dev"

// Info describes this binary.
type Info struct {
	Version      string `json:"version"`
	Revision     string `json:"revision,omitempty"`
	RevisionTime string `json:"revision_time,omitempty"`
	Modified     bool   `json:"modified"`
	GoVersion    string `json:"go_version"`
	OS           string `json:"os"`
	Arch         string `json:"arch"`
}

// Read returns this binary's Info.
func Read() Info {
	bi, _ := debug.ReadBuildInfo()
	return fromBuild(bi)
}

// fromBuild combines the -X variables with bi (nil when the binary has no
// build information).
func fromBuild(bi *debug.BuildInfo) Info {
	i := Info{GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if bi != nil {
		if bi.GoVersion != "" {
			i.GoVersion = bi.GoVersion
		}
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			i.Version = v
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				i.Revision = s.Value
			case "vcs.time":
				i.RevisionTime = s.Value
			case "vcs.modified":
				i.Modified = s.Value == "true"
			}
		}
	}
	if Version != "" {
		i.Version = Version
	}
	if i.Version == "" {
		i.Version = DevVersion
	}
	if Revision != "" {
		i.Revision = Revision
	}
	if RevisionTime != "" {
		i.RevisionTime = RevisionTime
	}
	if Modified != "" {
		i.Modified = Modified == "true"
	}
	return i
}

// Short is "emuctl <version>[ <revision, 12 digits>][+dirty]", the form
// result files record.
func (i Info) Short() string {
	s := "emuctl " + i.Version
	if r := i.Revision; r != "" {
		if len(r) > 12 {
			r = r[:12]
		}
		s += " " + r
	}
	if i.Modified {
		s += "+dirty"
	}
	return s
}
