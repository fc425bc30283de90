// Command tupled is the command-line front of the tupled storage engine.
//
//	tupled bench WORKLOAD [flags]   replay the seed experiments (forshare, hotrow, storm, manyrows, tpcb-like)
//	tupled serve [flags]            serve the PostgreSQL wire protocol over a database (in memory without --data)
//	tupled spec FILE.spec...        run lock schedules (isolation specs) against tupled
//	tupled verify DIR               check a database's files for damage
//	tupled salvage DIR NEWDIR       copy every intact row of a damaged database into a new one
//	tupled version                  print the version, commit and Go version (also --version)
//	tupled help [COMMAND]           show help
//
// 'tupled help COMMAND' (or COMMAND -h) prints a command's flags and what
// it does; README.md at the repository root shows each in use.
//
// Exit status: 0 on success, 1 when a command fails (verify: when it finds
// damage; salvage: when anything could not be copied), 2 on bad usage.
package main
