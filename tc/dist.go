package tc

import (
	"math"
	"sync"
)

// Jitter is drawn the way netem draws it, from a table of 16-bit values in
// units of 1/DistScale: delay = Delay + Jitter × t / DistScale for a
// uniformly chosen entry t. The kernel path loads the same tables into
// netem (TCA_NETEM_DELAY_DIST) and the engine samples them, so both
// backends produce the same delay distribution.
const (
	DistScale = 8192 // NETEM_DIST_SCALE
	distSize  = 4096 // entries per table (netem accepts up to 16384)
)

var (
	distOnce   sync.Once
	distTables map[string][]int16
)

// DistTable returns the table for a distribution name ("" = uniform).
func DistTable(name string) []int16 {
	distOnce.Do(func() {
		distTables = map[string][]int16{
			DistUniform: uniformTable(),
			DistNormal:  normalTable(),
			DistPareto:  paretoTable(),
		}
	})
	if name == "" {
		name = DistUniform
	}
	return distTables[name]
}

func clampInt16(v float64) int16 {
	return int16(max(-32767, min(32767, math.Round(v))))
}

// uniformTable covers [-1, 1): the same ±Jitter range netem uses when it
// has no table. Sending it anyway keeps "tc change" idempotent: netem keeps
// an old table when a change carries none.
func uniformTable() []int16 {
	t := make([]int16, distSize)
	for i := range t {
		t[i] = clampInt16(-DistScale + (2*float64(i)+1)*DistScale/distSize)
	}
	return t
}

// normalTable is the standard normal quantile function at the table's
// midpoints, so Jitter is the standard deviation.
func normalTable() []int16 {
	t := make([]int16, distSize)
	for i := range t {
		p := (float64(i) + 0.5) / distSize
		t[i] = clampInt16(DistScale * math.Sqrt2 * math.Erfinv(2*p-1))
	}
	return t
}

// paretoTable is iproute2's netem/pareto.c table: Pareto with shape 3 and
// scale 1, shifted by its mean and multiplied by 4/3, capped at +4: a
// long right tail from -0.67 to 4, mean -0.03, standard deviation 0.82.
func paretoTable() []int16 {
	const a = 3.0
	t := make([]int16, 0, distSize)
	for i := 65536; i > 0; i -= 65536 / distSize {
		v := 1/math.Pow(float64(i)/65536, 1/a) - 1.5
		t = append(t, clampInt16(v*(4.0/3.0)*DistScale))
	}
	return t
}
