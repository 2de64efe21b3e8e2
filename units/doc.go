// Package units holds the quantities links, flows and queues are described
// in, each its own type, so that a bit rate cannot be passed where a byte
// rate is wanted, nor a probability where a percentage is: a mix-up fails
// to compile instead of shaping a link eight times too fast.
//
//   - [BitRate] (bit/s, what a topology's rate: and tc's "10mbit" mean) and
//     [ByteRate] (bytes/s, what netem's and TBF's kernel fields hold), with
//     [BitRate.Bytes] and [ByteRate.Bits] the only ways across;
//   - [Bytes] (a size), [Percent] (0..100, with [Percent.Prob] for 0..1);
//   - [GilbertElliott], netem's two-state burst-loss model in percents;
//   - delays and durations stay [time.Duration]; [ParseDelay] (a link's
//     delay or jitter, below [MaxDelay]) and [ParseDuration] (a flow's
//     length, offset or interval) read them.
//
// Every type has one parser that says what would be valid when it fails,
// and a String that the parser reads back. *BitRate, *Bytes, *Percent and
// [DelayValue] implement the flag.Value (and pflag.Value) interface, so a
// command-line flag is typed too.
//
// The package is pure: no I/O, no dependencies beyond the standard library.
package units
