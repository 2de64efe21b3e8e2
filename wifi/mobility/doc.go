// Package mobility generates where a Wi-Fi node is over time: linear
// moves between waypoints, or a seeded mobility model (random walk,
// random waypoint, random direction, Gauss–Markov, reference point group)
// inside a rectangle. It is pure: a Path answers At(t) for any t ≥ 0 and
// touches nothing; the lab's supervisor (emu) asks it ten or more times a
// second and moves the node on the medium. The same Spec and seed always
// give the same path, whatever times it is asked at: a path is a list of
// straight legs drawn in order from the seed, and a query only draws
// legs up to its time.
package mobility
