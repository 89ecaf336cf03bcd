package coordinator

import (
	"bytes"
	"math/big"
	"testing"
)

func TestVarintBytes(t *testing.T) {
	for _, tc := range []struct {
		n    string
		want []byte
	}{
		{"0", []byte{0}}, {"1", []byte{1}}, {"127", []byte{0x7f}}, {"128", []byte{0, 0x80}},
		{"-1", []byte{0xff}}, {"-128", []byte{0x80}}, {"-129", []byte{0xff, 0x7f}},
		{"255", []byte{0, 0xff}}, {"-256", []byte{0xff, 0x00}},
		{"-18446744073709551616", []byte{0xff, 0, 0, 0, 0, 0, 0, 0, 0}},
		{"18446744073709551616", []byte{1, 0, 0, 0, 0, 0, 0, 0, 0}},
	} {
		n, _ := new(big.Int).SetString(tc.n, 10)
		if got := varintBytes(n); !bytes.Equal(got, tc.want) {
			t.Errorf("%s: % x, want % x", tc.n, got, tc.want)
		}
	}
}
