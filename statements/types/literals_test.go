package types

import (
	"bytes"
	"encoding/hex"
	"math/big"
	"math/rand/v2"
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

// TestParseInteger checks the split conversion against SetString on
// lengths around every split it makes.
func TestParseInteger(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 12))
	for _, n := range []int{1, 9, leafDigits - 1, leafDigits, leafDigits + 1, 2 * leafDigits, 2*leafDigits + 1,
		4*leafDigits - 1, 4 * leafDigits, 5*leafDigits + 17, 16*leafDigits + 3} {
		for _, sign := range []string{"", "-", "+"} {
			digits := make([]byte, n)
			for i := range digits {
				digits[i] = byte('0' + rng.IntN(10))
			}
			if n > 3 {
				digits[0], digits[1] = '0', '0' // leading zeros
			}
			s := sign + string(digits)
			want, _ := new(big.Int).SetString(s, 10)
			got, ok := parseInteger(s)
			if !ok || got.Cmp(want) != 0 {
				t.Fatalf("%d digits, sign %q: got %v, %v", n, sign, ok, got)
			}
		}
	}
	for _, bad := range []string{"", "-", "+", "1.5", "12a", "--1", " 1", "1 "} {
		if _, ok := parseInteger(bad); ok {
			t.Errorf("parseInteger(%q) accepted", bad)
		}
	}
}

// TestDecimalBytes: an exponent or scale past 32 bits is refused (Java's
// BigDecimal refuses it), not wrapped into another value.
func TestDecimalBytes(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"1.50", "00000002" + "0096"},
		{"-1E+3", "fffffffd" + "ff"},
		{"1E-2147483647", "7fffffff" + "01"},
		{"1E+2147483647", "80000001" + "01"},
		{"1E+2147483648", ""},
		{"1E-2147483648", ""},
		{"0.1E-2147483647", ""},
		{"1E4294967296", ""},
		{"1E+9223372036854775807", ""},
		{"1E-9223372036854775808", ""},
		{"1.2.3", ""},
	} {
		got, err := DecimalBytes(tc.in)
		if tc.want == "" {
			if err == nil {
				t.Errorf("%s: got %x, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || hex.EncodeToString(got) != tc.want {
			t.Errorf("%s: got %x, %v; want %s", tc.in, got, err, tc.want)
		}
	}
}
