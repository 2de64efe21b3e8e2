// Package report builds a Markdown and HTML report from a directory of
// result files: summary tables (also written as CSV and JSON), per-run
// plots (throughput, cwnd, RTT CDF), repetition statistics with
// confidence intervals and bar charts, ACK frequency from referenced
// captures against the TACK model, and the recorded conditions. It reads
// files and writes files in the output directory; it never touches the
// network.
package report
