package topo

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Channel plans (IEEE 802.11-2020 Annex E, 802.11ax/be for 6 GHz); the
// regulatory domain decides what a real card may use, hwsim accepts these.

// channels24 are the 2.4 GHz channels usable with OFDM (14 is DSSS-only,
// Japan, and never valid for g/n/ax/be).
var channels24 = []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}

// channels5 are the 20 MHz 5 GHz channels.
var channels5 = []int{36, 40, 44, 48, 52, 56, 60, 64, 100, 104, 108, 112, 116, 120, 124, 128, 132, 136, 140, 144, 149, 153, 157, 161, 165, 169, 173, 177}

// channels6 are the 20 MHz 6 GHz channels: 1, 5, …, 233.
func channels6() []int {
	var out []int
	for c := 1; c <= 233; c += 4 {
		out = append(out, c)
	}
	return out
}

// ChannelFreq returns the centre frequency in MHz of a 20 MHz channel.
func ChannelFreq(band string, ch int) int {
	switch band {
	case Band24:
		return 2407 + 5*ch
	case Band5:
		return 5000 + 5*ch
	case Band6:
		return 5950 + 5*ch
	}
	return 0
}

// BandChannels lists the valid 20 MHz channels of a band.
func BandChannels(band string) []int {
	switch band {
	case Band24:
		return channels24
	case Band5:
		return channels5
	case Band6:
		return channels6()
	}
	return nil
}

// blocks5 are the 5 GHz channel groups of 40/80/160 MHz (first 20 MHz
// channel of each block).
var blocks5 = map[int][]int{
	40:  {36, 44, 52, 60, 100, 108, 116, 124, 132, 140, 149, 157, 165, 173},
	80:  {36, 52, 100, 116, 132, 149, 165},
	160: {36, 100, 149},
}

// ModeBands lists the bands each mode may use.
var ModeBands = map[string][]string{
	WiFiModeA:  {Band5},
	WiFiModeB:  {Band24},
	WiFiModeG:  {Band24},
	WiFiModeN:  {Band24, Band5},
	WiFiModeAC: {Band5},
	WiFiModeAX: {Band24, Band5, Band6},
	WiFiModeBE: {Band24, Band5, Band6},
}

// ModeWidths lists the channel widths each mode may use.
var ModeWidths = map[string][]int{
	WiFiModeA:  {20},
	WiFiModeB:  {20}, // 22 MHz of DSSS, on a 20 MHz channel's plan
	WiFiModeG:  {20},
	WiFiModeN:  {20, 40},
	WiFiModeAC: {20, 40, 80, 160},
	WiFiModeAX: {20, 40, 80, 160},
	WiFiModeBE: {20, 40, 80, 160, 320},
}

// WiFiModes in documentation order.
var WiFiModes = []string{WiFiModeA, WiFiModeB, WiFiModeG, WiFiModeN, WiFiModeAC, WiFiModeAX, WiFiModeBE}

// ResolveChannel checks a channel for a mode and returns it with its
// frequency and centre channel, or a message saying what would be valid.
func ResolveChannel(mode, band string, ch, width int) (WiFiChannel, string) {
	c := WiFiChannel{Band: band, Channel: ch, Width: width}
	if !slices.Contains(ModeBands[mode], band) {
		return c, fmt.Sprintf("mode %s does not run on the %s GHz band (mode %s: %s GHz)", mode, band, mode, strings.Join(ModeBands[mode], ", "))
	}
	valid := BandChannels(band)
	if !slices.Contains(valid, ch) {
		return c, fmt.Sprintf("channel %d is not a %s GHz channel (valid: %s)", ch, band, channelList(valid))
	}
	if !slices.Contains(ModeWidths[mode], width) {
		return c, fmt.Sprintf("width %d MHz is not available in mode %s (valid: %s MHz)", width, mode, intList(ModeWidths[mode]))
	}
	c.FreqMHz = ChannelFreq(band, ch)
	c.CenterChannel = ch
	if width == 20 {
		return c, ""
	}
	switch band {
	case Band24:
		// 40 MHz at 2.4 GHz: the secondary channel is 4 above (HT40+,
		// channels 1–9) or below (HT40-, 5–13); emuctl picks + where it fits.
		if width != 40 {
			return c, fmt.Sprintf("the 2.4 GHz band has no %d MHz channels (valid: 20, 40)", width)
		}
		if ch <= 9 {
			c.CenterChannel = ch + 2
		} else {
			c.CenterChannel = ch - 2
		}
		return c, ""
	case Band5:
		n := width / 20
		for _, first := range blocks5[width] {
			if ch >= first && ch < first+4*n {
				c.CenterChannel = first + 2*(n-1)
				return c, ""
			}
		}
		return c, fmt.Sprintf("channel %d has no %d MHz block on 5 GHz (%d MHz blocks start at channels %s)", ch, width, width, intList(blocks5[width]))
	case Band6:
		// 6 GHz blocks are aligned on channel 1: a block of n 20 MHz
		// channels starts at 1 + 4·n·k. 320 MHz blocks start at 1 and 33
		// (320MHz-1) and 161 and 193 (320MHz-2); emuctl uses the former.
		n := width / 20
		k := (ch - 1) / (4 * n)
		first := 1 + 4*n*k
		if width == 320 {
			first = 1 + 128*((ch-1)/128)
			if ch >= first+4*n || first+4*(n-1) > 233 {
				return c, fmt.Sprintf("channel %d has no 320 MHz block on 6 GHz (valid primaries: 1-61, 129-189)", ch)
			}
		}
		if first+4*(n-1) > 233 {
			return c, fmt.Sprintf("channel %d has no %d MHz block on 6 GHz", ch, width)
		}
		c.CenterChannel = first + 2*(n-1)
		return c, ""
	}
	return c, fmt.Sprintf("band %q is not valid (valid: 2.4, 5, 6)", band)
}

// channelList renders channels compactly: runs of step 1 or 4 as a-b.
func channelList(chs []int) string {
	var parts []string
	for i := 0; i < len(chs); {
		j := i
		step := 0
		if i+1 < len(chs) {
			step = chs[i+1] - chs[i]
		}
		for j+1 < len(chs) && chs[j+1]-chs[j] == step && (step == 1 || step == 4) {
			j++
		}
		if j-i >= 2 {
			sep := "-"
			if step == 4 {
				sep = "..."
			}
			parts = append(parts, fmt.Sprintf("%d%s%d", chs[i], sep, chs[j]))
			i = j + 1
			continue
		}
		parts = append(parts, strconv.Itoa(chs[i]))
		i++
	}
	return strings.Join(parts, ", ")
}

func intList(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}
