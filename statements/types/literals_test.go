package types

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
		if got := VarintBytes(n); !bytes.Equal(got, tc.want) {
			t.Errorf("%s: % x, want % x", tc.n, got, tc.want)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for _, tc := range []struct {
		in           string
		months, days int32
		nanos        int64
		wantErr      bool
	}{
		{in: "1h30m", nanos: 90 * 60e9},
		{in: "6s7ms", nanos: 6e9 + 7e6},
		{in: "1mo2d", months: 1, days: 2},
		{in: "1y2w", months: 12, days: 14},
		{in: "-3us", nanos: -3000},
		{in: "5x", wantErr: true},
	} {
		d, err := ParseDuration(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: err %v", tc.in, err)
			continue
		}
		if !tc.wantErr && (d.Months != tc.months || d.Days != tc.days || int64(d.Nanos) != tc.nanos) {
			t.Errorf("%s = %+v", tc.in, d)
		}
	}
}
