package test

import (
	"os"
	"testing"
)

// TestMain removes, once every test has ended, the cqld binary the
// subprocess tests built (36 MB a test process otherwise leaves in the
// temporary directory).
func TestMain(m *testing.M) {
	code := m.Run()
	removeBinary()
	os.Exit(code)
}
