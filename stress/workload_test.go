package stress

import "testing"

func TestInlinedLiterals(t *testing.T) {
	got := string(appendInlined(nil, `UPDATE t SET "a?" = ?, b = ? WHERE k = ? AND s = '?'`, []any{[]byte{0xab, 1}, int64(-3), "it's"}))
	want := `UPDATE t SET "a?" = 0xab01, b = -3 WHERE k = 'it''s' AND s = '?'`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
