// Package wire holds the primitives of cqld's internode encodings
// (mutation's Update codec, replica's read commands and answers): uvarint
// lengths and counts, byte strings, clustering values and slice bounds,
// and a Reader that decodes them from untrusted bytes without panicking
// or allocating more than the bytes it is given justify.
//
// A Reader's first failure sticks: every later read returns zero values,
// so a decoder reads a whole message straight through and checks Err once.
// Each value has exactly one encoding (varints minimal, flags 0 or 1), so
// what decodes encodes again to the same bytes.
package wire
