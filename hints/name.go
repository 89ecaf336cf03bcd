package hints

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cqld/cqld/ring"
)

// A hints file is named as Cassandra names them,
// <host id>-<creation unix ms>-<version>.hints; a quarantined one gets
// corruptSuffix appended, so it is never read again.
const (
	fileSuffix    = ".hints"
	corruptSuffix = ".corrupt"
	lockFileName  = "LOCK"
)

func fileName(id ring.HostID, ts int64) string {
	return fmt.Sprintf("%s-%d-%d%s", id, ts, fileVersion, fileSuffix)
}

// parseFileName reads a hints file's name; ok is false for any other file.
func parseFileName(name string) (id ring.HostID, ts int64, ok bool) {
	rest, found := strings.CutSuffix(name, fileSuffix)
	if !found || len(rest) < 37 || rest[36] != '-' {
		return id, 0, false
	}
	id, err := ring.ParseHostID(rest[:36])
	if err != nil {
		return id, 0, false
	}
	tsText, version, found := strings.Cut(rest[37:], "-")
	if !found || version != strconv.Itoa(fileVersion) {
		return id, 0, false
	}
	ts, err = strconv.ParseInt(tsText, 10, 64)
	if err != nil || ts < 0 {
		return id, 0, false
	}
	return id, ts, true
}
