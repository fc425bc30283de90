// Command tupled is the command-line front of the tupled storage engine.
//
//	tupled spec FILE.spec...   run lock schedules (isolation specs) against tupled
//	tupled help [COMMAND]      show help
//
// Exit status: 0 on success, 1 when a command fails, 2 on bad usage.
package main
