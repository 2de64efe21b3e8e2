package labstate

import "time"

// UnderlayPath is the measured round trip from one machine to another's
// underlay address.
type UnderlayPath struct {
	From string        `json:"from"`
	To   string        `json:"to"`
	RTT  time.Duration `json:"rtt_median_ns"`
	// Min is the smallest RTT sample: the path's own delay, without the
	// queueing and scheduling the others met.
	Min time.Duration `json:"rtt_min_ns,omitempty"`
	// Sigma is the RTT samples' spread: 1.4826 x their median absolute
	// deviation (the standard deviation for normal samples, robust to a
	// scheduling hiccup).
	Sigma   time.Duration `json:"rtt_sigma_ns"`
	Samples int           `json:"samples"`
	// Offset is To's clock minus From's (emu/cluster_clock.go), from the
	// exchange with the shortest round trip, ClockRTT.
	Offset   time.Duration `json:"clock_offset_ns"`
	ClockRTT time.Duration `json:"clock_rtt_ns"`
	// Device is From's device that reaches To, and SpeedMbps its link
	// speed as the kernel reports it (0: none reported;
	// emu/cluster_capacity.go).
	Device    string `json:"device,omitempty"`
	SpeedMbps int    `json:"speed_mbps,omitempty"`
}

// OneWay is the path's one-way delay that a cut direction's delay is
// lessened by: the smallest RTT / 2 (the median's when no smallest was
// kept). Taking more would make the link faster than configured whenever
// the underlay is quicker than its median; taking this, the link is never
// faster, and slower only by the underlay's own variation (microseconds
// on a LAN).
func (p UnderlayPath) OneWay() time.Duration {
	if p.Min > 0 {
		return p.Min / 2
	}
	return p.RTT / 2
}
