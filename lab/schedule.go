package lab

import (
	"time"

	"github.com/emuctl/emuctl/emu"
)

// ScheduleStatus is a schedule of a running lab.
type ScheduleStatus struct {
	Name    string    `json:"name"`
	T0      string    `json:"t0"`
	Running bool      `json:"running"`
	Started time.Time `json:"started,omitzero"`
	Applied int       `json:"applied"` // steps applied since the last start
	Steps   int       `json:"steps"`   // per repetition
	Repeat  string    `json:"repeat,omitempty"`
}

// StepLog is one applied (or failed) step of a schedule, as the lab's
// schedule.log holds it.
type StepLog struct {
	Schedule string        `json:"schedule"`
	Rep      int           `json:"rep"`  // repetition, from 0
	Step     int           `json:"step"` // index in the schedule's steps
	Planned  time.Duration `json:"planned"`
	Due      time.Time     `json:"due"`
	Applied  time.Time     `json:"applied"`
	Late     time.Duration `json:"late"` // Applied − Due
	// where the lateness went: the timer's wake-up after Due, the wait
	// for the lab's lock, and the change itself
	Woke    time.Duration `json:"woke"`
	Locked  time.Duration `json:"locked"`
	Took    time.Duration `json:"took"`
	Link    int           `json:"link"`
	Dir     string        `json:"dir,omitempty"`      // "" both, a->b, b->a
	RateBps float64       `json:"rate_bps,omitempty"` // the rate it set, if any
	What    string        `json:"what"`
	Error   string        `json:"error,omitempty"`
}

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
func Schedules(name string) ([]ScheduleStatus, error) {
	s, err := emu.Schedules(name)
	return convert(s, func(s emu.ScheduleStatus) ScheduleStatus { return ScheduleStatus(s) }), err
}

// ScheduleLog is the step log of the lab called name (empty when no step
// ran).
func ScheduleLog(name string) ([]StepLog, error) {
	s, err := emu.ScheduleLog(name)
	return convert(s, func(s emu.StepLog) StepLog { return StepLog(s) }), err
}
