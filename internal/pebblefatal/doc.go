// Package pebblefatal tells apart the fatal messages pebble gives its
// logger's Fatalf. Pebble expects the process to end after each; those
// about a write its disk failed are the node's to handle (its
// disk_failure_policy), every other one is an invariant broken, which
// ends the process as pebble asks. Logger is the pebble logger of both
// databases (storage, metalog) that draws that line.
package pebblefatal
