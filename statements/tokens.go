package statements

// chunkTokens is the number of tokens in one chunk of a tokenBuf (2 KiB):
// most queries fit in one, and a parser the pool lost costs little to
// rebuild.
const chunkTokens = 64

// tokenBuf holds the tokens of a query in fixed chunks. Growing it never
// copies tokens, so a query's tokens cost their size once (a slice grown
// by append costs about five times its final size for large queries), and
// a pointer to a token stays valid while later tokens are added.
type tokenBuf struct {
	chunks [][]token
	n      int
}

func (b *tokenBuf) len() int { return b.n }

// at returns token i; REQUIRES: i < b.len().
func (b *tokenBuf) at(i int) *token { return &b.chunks[i/chunkTokens][i%chunkTokens] }

// add appends a zero token and returns it.
func (b *tokenBuf) add() *token {
	if c := b.n / chunkTokens; c == len(b.chunks) {
		b.chunks = append(b.chunks, make([]token, chunkTokens))
	}
	b.n++
	t := b.at(b.n - 1)
	*t = token{}
	return t
}

// drop removes the last token.
func (b *tokenBuf) drop() { b.n-- }

// reset empties b, keeping its first chunk for reuse and releasing the
// strings the tokens refer to.
func (b *tokenBuf) reset() {
	if len(b.chunks) == 0 {
		return
	}
	clear(b.chunks[0][:min(b.n, chunkTokens)])
	clear(b.chunks[1:])
	b.chunks, b.n = b.chunks[:1], 0
}

// add is append for the lists of a statement, which can hold millions of
// elements: past 256 elements it doubles a full slice's capacity, where
// append grows it by a quarter and so allocates about five times the final
// size in all.
func add[T any](s []T, v T) []T {
	if len(s) == cap(s) && len(s) >= 256 {
		grown := make([]T, len(s), 2*len(s))
		copy(grown, s)
		s = grown
	}
	return append(s, v)
}
