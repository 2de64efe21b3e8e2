package lab

// Some of emu's result types have a copy of lab's own (same fields, same
// JSON: VerifyOptions, PingResult, CleanReport, ScheduleStatus, StepLog,
// MobilityStatus, DirResult, DoctorReport with Capability and BackendChoice),
// so lab's callers do not name the runtime's types; the others are still
// aliases (State and what it nests, LinkInfo, WiFiNodeStatus, OVSInfo).
// A Go conversion between the two fails to compile when emu adds a
// field; TestOwnTypesMatchEmu catches a changed JSON tag.

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
