package lab

// Lab's callers never name the runtime's (emu's) types. Some of emu's
// result types have a copy of lab's own (same fields, same JSON:
// VerifyOptions, PingResult, CleanReport, ScheduleStatus, StepLog,
// MobilityStatus, DirResult, DoctorReport with Capability and
// BackendChoice); a Go conversion between the two fails to compile when
// emu adds a field, and TestOwnTypesMatchEmu catches a changed JSON tag.
// The others (State and what it nests, LinkInfo, WiFiNodeStatus,
// OVSInfo) are aliases of package labstate's types, which emu fills and
// uses under the same names: one type, nothing to convert.
// TestOwnTypesNoEmu fails when an exported name of lab reaches a type
// defined in emu.

// convert copies emu's values into lab's type; nil stays nil, so JSON
// prints null where emu's would.
func convert[E, T any](in []E, f func(E) T) []T {
	if in == nil {
		return nil
	}
	out := make([]T, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}
