// Package plan gives each level of a Pebble LSM its own filter policy: a
// Plan is seven policies, L0 to L6, of package cuckoopolicy's family,
// Pebble's bloom filter, or none. Apply sets one on pebble.Options with the
// readers of both families; Progressive is a preset for the usual LSM
// shape; Fit fits one to an open database within a budget of filter bytes
// and reports it beside the current filters and the best bloom-only plan at
// the same bytes; Live refits one as the database grows.
//
// Use it when a uniform cuckoopolicy.FilterPolicy spends bytes where the
// lookups do not read them (db.Get never reads L6 filters) or too few where
// they do; a database whose lookups read every level alike gains little.
//
// # Traps
//
//   - The OPTIONS file names each level's family, not its budget or plan:
//     keep the plan in code and apply it at every open.
//   - Tables keep the filters they were written with until compactions
//     rewrite them: a plan reaches the LSM at the pace of its compactions.
//   - A live plan reads the database from goroutines of its own: close the
//     database with the DB that Live.Start returns (or call Live.Stop
//     before Pebble's Close), as Pebble's Close is not safe beside a read.
package plan
