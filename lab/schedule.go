package lab

import "github.com/emuctl/emuctl/emu"

// ScheduleStatus is a schedule of a running lab and whether it runs (an
// alias of emu's type).
type ScheduleStatus = emu.ScheduleStatus

// StepLog is one applied (or failed) step of a schedule (an alias of
// emu's type).
type StepLog = emu.StepLog

// StartSchedule starts (over) the schedule called schedule of the lab
// called name, as `emuctl schedule start` does.
func StartSchedule(name, schedule string) error {
	_, err := emu.StartSchedule(name, schedule, "")
	return err
}

// StopSchedule stops a schedule of the lab called name ("" every one).
func StopSchedule(name, schedule string) error { return emu.StopSchedule(name, schedule) }

// Schedules lists the schedules of the lab called name and whether they
// run.
func Schedules(name string) ([]ScheduleStatus, error) { return emu.Schedules(name) }

// ScheduleLog is the step log of the lab called name (empty when no step
// ran).
func ScheduleLog(name string) ([]StepLog, error) { return emu.ScheduleLog(name) }
