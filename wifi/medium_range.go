package wifi

// RangeM is how far access point radio i reaches under the medium's
// path-loss model: the distance at which its frames arrive with the SNR
// threshold of its BSS's lowest rate (the ideal manager's table, as the
// engine backend picks rates), pair overrides aside. ok is false for a
// radio that is not an access point of the engine backend (its mode
// unknown) or a model that cannot say.
func (c *MediumConfig) RangeM(i int) (float64, bool) {
	r := c.Radios[i]
	if r.AP != -1 || r.Mode == "" {
		return 0, false
	}
	rates := idealRates(r.Mode, bandOfFreq(r.FreqMHz), r.WidthMHz)
	if len(rates) == 0 {
		return 0, false
	}
	// where its frames arrive at a receiver with an isotropic antenna
	// with exactly the threshold's SNR (Link's budget)
	d, ok := c.budget(r).RangeM(berThreshold(rates[0]))
	if !ok {
		return 0, false
	}
	return round2(d), true
}
