// Package commitlog will be cqld's write-ahead log: segment files, group
// commit with the sync modes periodic, batch, group and adaptive, and replay
// at start-up (see ARCHITECTURE.md, "Durability contract").
//
// It is empty today: the node stores only its schema, which package storage
// writes atomically on its own. The commit log issue fills it in; the
// directory it will own (commitlog_directory) is already created at start.
package commitlog
