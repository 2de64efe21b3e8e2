package buildinfo

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestFromBuild(t *testing.T) {
	stamped := &debug.BuildInfo{
		GoVersion: "go1.99.1",
		Main:      debug.Module{Path: "github.com/emuctl/emuctl", Version: "(devel)"},
		Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.time", Value: "2026-01-02T03:04:05Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	got := fromBuild(stamped)
	want := Info{Version: DevVersion, Revision: "0123456789abcdef0123456789abcdef01234567", RevisionTime: "2026-01-02T03:04:05Z",
		Modified: true, GoVersion: "go1.99.1", OS: runtime.GOOS, Arch: runtime.GOARCH}
	if got != want {
		t.Errorf("stamped build:\n got %+v\nwant %+v", got, want)
	}
	if s := got.Short(); s != "emuctl dev 0123456789ab+dirty" {
		t.Errorf("Short() = %q", s)
	}

	// go install ...@v0.3.0: the module version, no VCS stamp.
	got = fromBuild(&debug.BuildInfo{Main: debug.Module{Version: "v0.3.0"}})
	if got.Version != "v0.3.0" || got.Revision != "" || got.GoVersion != runtime.Version() {
		t.Errorf("installed build: %+v", got)
	}
	if s := got.Short(); s != "emuctl v0.3.0" {
		t.Errorf("Short() = %q", s)
	}

	// -ldflags -X wins over the stamp.
	Version, Revision, RevisionTime, Modified = "v1.0.0", "fedcba9876543210", "2026-02-03T00:00:00Z", "false"
	t.Cleanup(func() { Version, Revision, RevisionTime, Modified = "", "", "", "" })
	got = fromBuild(stamped)
	if got.Version != "v1.0.0" || got.Revision != "fedcba9876543210" || got.RevisionTime != "2026-02-03T00:00:00Z" || got.Modified {
		t.Errorf("-X build: %+v", got)
	}
	if got := fromBuild(nil); got.Version != "v1.0.0" || got.GoVersion != runtime.Version() {
		t.Errorf("no build info: %+v", got)
	}
}
