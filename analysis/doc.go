// Package analysis turns traffic results into the numbers and figures a
// paper uses: goodput and utilisation, RTT and jitter statistics, loss and
// retransmission ratios, cwnd statistics, Jain's fairness index,
// loss-recovery episodes, ACK frequency from captures, the TACK ACK-frequency
// model, and repetition statistics with Student-t confidence intervals.
//
// It owns the result format (Result, version 1) that the traffic generator
// writes. Every metric is a pure function of its inputs; the package never
// touches the host (no namespaces, sockets or processes) and reads files
// only when asked to load results or captures. Definitions are written down
// in METRICS.md; tables render as Markdown, CSV and JSON, plots as SVG and
// PNG.
package analysis
