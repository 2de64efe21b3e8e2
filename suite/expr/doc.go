// Package expr is the suite files' expression language: small arithmetic
// and boolean formulas over run metrics, scenario parameters and model
// functions, as checks, shown values and plot series write them:
//
//	goodput{sack=on} >= 1.15 * goodput{sack=off}
//	abs(loss_rate[sta->ap] - loss) <= max(0.2%, 3 * binom_sigma(loss, link_in[sta->ap]))
//	cc[bulk] == "reno" and sysctl[sta:net.ipv4.tcp_sack] == sack
//
// Parse turns text into an Expr (a tree of Nodes; an Error carries the
// byte offset of the problem, for file:line:col messages); Eval computes
// it in an Env, which resolves each Ref (name[arg]{param=label,...}) to a
// Value — a number or a string. A Ref the runs cannot provide is an error
// wrapping ErrMissing, and the check is then undecided rather than
// failed. Functions is the table of the functions expressions may call
// (TCP capacity, Mathis, queueing delay, TACK's model, binomial bounds,
// ...); Walk visits a tree, Sides splits a top-level comparison, FmtNum
// prints a number as reports do. Numbers may carry units (5%, 2ms, 54mbit),
// converted to the expression units: fractions, milliseconds, Mbit/s.
//
// The package is pure: no I/O, no knowledge of suites or runs (package
// suite supplies the Env).
package expr
