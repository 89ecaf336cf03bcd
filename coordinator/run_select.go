package coordinator

import (
	"bytes"
	"context"
	"encoding/binary"
	"slices"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/statements/functions"
	"github.com/cqld/cqld/statements/types"
	"github.com/cqld/cqld/storage"
)

// pageState is where a paged SELECT stopped.
type pageState struct {
	pk         []byte
	ck         [][]byte // nil: the partition's static-only row was the last
	remaining  int32    // rows still allowed by LIMIT, -1 for none
	pRemaining int32    // rows still allowed in pk's partition by PER PARTITION LIMIT
}

func (s *pageState) encode() []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(s.pk)))
	b = append(b, s.pk...)
	b = append(b, byte(len(s.ck)))
	if s.ck == nil {
		b[len(b)-1] = 0xff
	}
	for _, v := range s.ck {
		b = types.AppendBytes(b, v)
	}
	b = binary.BigEndian.AppendUint32(b, uint32(s.remaining))
	return binary.BigEndian.AppendUint32(b, uint32(s.pRemaining))
}

func decodePageState(b []byte) (*pageState, error) {
	bad := protocolErrorf("Invalid value for the paging state")
	s := &pageState{}
	v, rest, ok := types.ReadBytes(b)
	if !ok || v == nil || len(rest) < 1 {
		return nil, bad
	}
	s.pk = v
	n := int(rest[0])
	rest = rest[1:]
	if n != 0xff {
		s.ck = make([][]byte, 0, n)
		for i := 0; i < n; i++ {
			if v, rest, ok = types.ReadBytes(rest); !ok {
				return nil, bad
			}
			s.ck = append(s.ck, v)
		}
	}
	if len(rest) != 8 {
		return nil, bad
	}
	s.remaining = int32(binary.BigEndian.Uint32(rest))
	s.pRemaining = int32(binary.BigEndian.Uint32(rest[4:]))
	return s, nil
}

// selectRun is the state of one execution of a tableSelectPlan.
type selectRun struct {
	p        *tableSelectPlan
	x        *execution
	now      int32
	rows     message.RowSet
	err      error   // from evaluating the selection; stops the read
	sctx     *selCtx // with p.sel (a pointer, so that the run can stay on the stack)
	agg      *aggRun // with aggregates; a pointer, so that the run stays a small object (at most 512 bytes: no allocation header)
	limit    int32   // -1: none
	ppl      int32   // -1: none
	pageSize int32   // <= 0: no paging
	// tombstones counts the tombstones the read meets (nil for system
	// tables, whose rows are made on each read, or without limits); it
	// points at tomb, which saves the read an allocation.
	tombstones *storage.Tombstones
	tomb       storage.Tombstones
	// size is the bytes the rows take in the response so far, room what
	// they may take (response.go): a page that would pass room ends
	// before, an unpaged result that would is refused.
	size, room int
	full       bool // the page ended at room
	// last is where the last row taken is, for a page ended at room.
	last struct {
		pk     []byte
		ck     [][]byte
		inPart int32
	}
	// out is the run's answer and firstRow the room of its first row:
	// a result is made in the run's own allocation (the run escapes to
	// the heap anyway: the replica's callback holds it).
	out      rowsBlock
	firstRow [1][][]byte
	resume   *pageState
	next     *pageState
	filters  [][][]byte // allowed values per filter
	// orderKeys are the rows' sort keys when p.orderAfter > 0: their
	// ORDER BY columns in clustering order, nil for a static-only row.
	orderKeys [][]byte
	// per partition
	pk       []byte
	pkVals   [][]byte
	static   *storage.Row
	inPart   int32
	anyRow   bool
	skipping bool // still before the resume point of resume.pk
}

// aggRun is the group being aggregated.
type aggRun struct {
	open   bool
	first  [][]byte // the inputs of the group's first row
	pk     []byte   // GROUP BY: the group's partition and clustering prefix
	ck     [][]byte
	states []functions.AggState
}

func (p *tableSelectPlan) run(_ context.Context, c *Coordinator, x *execution) (message.Message, error) {
	if !p.t.system {
		if err := c.checkCurrent(p.t); err != nil {
			return nil, err
		}
	}
	if err := c.functionsCurrent(p.fns.used); err != nil {
		return nil, err
	}
	err := checkReadConsistency(x)
	if err == nil && isSerial(x.opts.Consistency) && p.keys.pkComplete() {
		// Cassandra refuses a serial read of several named partitions; a
		// range read at SERIAL runs, as a read at QUORUM does.
		var pks [][][]byte
		if pks, err = evalKeys(p.t, p.keys.pk, p.t.pk, x); err == nil && len(pks) != 1 {
			err = errSerialPartitions
		}
	}
	if err != nil {
		return nil, err
	}
	r := &selectRun{p: p, x: x, now: x.nowInSeconds(), limit: -1, ppl: -1, pageSize: x.opts.PageSize}
	if !p.t.system && c.opts.Tombstones != (TombstoneLimits{}) {
		r.tomb.Fail = c.opts.Tombstones.Fail
		r.tombstones = &r.tomb
	}
	if p.orderAfter > 0 && r.pageSize > 0 {
		return nil, errPagedOrderAfter
	}
	if r.room, err = c.rowsRoom(p.metaSize); err != nil {
		return nil, err
	}
	if p.sel != nil {
		r.sctx = &selCtx{x: x}
	}
	if r.limit, err = evalLimit(p.limit, x, "LIMIT"); err != nil {
		return nil, err
	}
	if r.ppl, err = evalLimit(p.ppl, x, "PER PARTITION LIMIT"); err != nil {
		return nil, err
	}
	userLimit := r.limit
	if p.orderAfter > 0 && !p.aggregates() {
		r.limit = -1 // applied once the rows are sorted
	}
	if p.aggregates() || p.distinct {
		r.pageSize = 0 // aggregates, groups and DISTINCT are answered in one page
	}
	if p.aggregates() {
		k := p.keys
		switch {
		case !k.pkAny() && k.tokenLower == nil && k.tokenUpper == nil:
			x.warn(warnAggregateNoKey)
		case k.pkIn():
			x.warn(warnAggregateIn)
		}
		if p.sel.groupCK < 0 {
			// Aggregating everything reads every selected row: LIMIT
			// and PER PARTITION LIMIT apply to the one result row.
			r.limit, r.ppl = -1, -1
		}
		r.agg = &aggRun{states: make([]functions.AggState, len(p.sel.aggs))}
	}
	if x.opts.PagingState != nil && r.pageSize > 0 {
		if r.resume, err = decodePageState(x.opts.PagingState); err != nil {
			return nil, err
		}
		r.limit = r.resume.remaining
		r.skipping = true
	}
	for _, f := range p.keys.filters {
		vs, err := f.vals.eval(x)
		if err != nil {
			return nil, err
		}
		r.filters = append(r.filters, vs)
	}
	if p.keys.pkComplete() {
		err = r.readPartitions(c)
	} else {
		err = r.scan(c)
	}
	if err == nil {
		err = r.err
	}
	if err = c.checkTombstones(r, err); err != nil {
		return nil, err
	}
	if err == nil && p.aggregates() {
		// The last group; without GROUP BY there is always one result row,
		// even over no rows.
		if r.agg.open || (p.sel.groupCK < 0 && r.limit != 0) {
			r.flushGroup()
			err = r.err
		}
	}
	if err != nil {
		return nil, err
	}
	if p.orderAfter > 0 && !p.aggregates() {
		r.sortRows(userLimit)
	}
	blk := &r.out
	blk.md = message.RowsMetadata{ColumnCount: int32(len(p.meta)), Columns: p.meta}
	if r.next != nil {
		blk.md.PagingState = r.next.encode()
	}
	applyMetadataRules(&blk.md, p.metaID, x)
	blk.res = message.RowsResult{Metadata: &blk.md, Data: r.rows}
	return &blk.res, nil
}

var errPagedOrderAfter = invalidf("Cannot page queries with both ORDER BY and a IN restriction on the partition key; you must either remove the ORDER BY or the IN and sort client side, or disable paging for this query")

// sortRows orders the rows of several partitions by their ORDER BY
// columns, keeping each partition's order among equal keys as Cassandra's
// stable sort does, and keeps the first limit of them.
func (r *selectRun) sortRows(limit int32) {
	idx := make([]int, len(r.rows))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		c := bytes.Compare(r.orderKeys[a], r.orderKeys[b])
		if r.p.reverse {
			return -c
		}
		return c
	})
	sorted := make(message.RowSet, len(idx))
	for i, j := range idx {
		sorted[i] = r.rows[j]
	}
	if limit >= 0 && int(limit) < len(sorted) {
		sorted = sorted[:limit]
	}
	r.rows = sorted
}

// rowsBlock allocates a ROWS result and its metadata at once.
type rowsBlock struct {
	md  message.RowsMetadata
	res message.RowsResult
}

func evalLimit(e valueExpr, x *execution, what string) (int32, error) {
	if e == nil {
		return -1, nil
	}
	v, err := e.eval(x)
	if err != nil {
		return 0, err
	}
	if len(v) != 4 {
		return 0, invalidf("Invalid null value of %s", what)
	}
	n := int32(binary.BigEndian.Uint32(v))
	if n <= 0 {
		return 0, invalidf("%s must be strictly positive", what)
	}
	return n, nil
}

// done reports whether the page or the limit is full.
func (r *selectRun) done() bool {
	if r.limit == 0 || r.full {
		return true
	}
	return r.pageSize > 0 && int32(len(r.rows)) >= r.pageSize
}

// fits reports whether a result row of n bytes fits in the response's
// room. One that does not ends a paged read's page before it, resuming
// after the last row taken (a page's first row is taken whatever its
// size: the frontend refuses it if it is too big for a frame), and fails
// an unpaged read with INVALID.
func (r *selectRun) fits(n int) bool {
	if r.size+n <= r.room {
		r.size += n
		return true
	}
	return r.overflow(n)
}

// overflow is fits of a row past the room (fits is inlined).
func (r *selectRun) overflow(n int) bool {
	if r.pageSize > 0 && len(r.rows) == 0 {
		r.size += n
		return true
	}
	if r.pageSize <= 0 {
		r.err = responseTooBig(r.room + r.p.metaSize + rowsResultOverhead)
		return false
	}
	r.full = true
	if r.limit != 0 {
		pr := int32(-1)
		if r.ppl >= 0 {
			pr = r.ppl - r.last.inPart
		}
		r.next = &pageState{pk: r.last.pk, ck: r.last.ck, remaining: r.limit, pRemaining: pr}
	}
	return false
}

// part is one partition a read names.
type part struct {
	pk    []byte
	vals  [][]byte
	order []byte // the key in value order, to sort IN keys
}

func sortParts(parts []part) {
	slices.SortFunc(parts, func(a, b part) int { return bytes.Compare(a.order, b.order) })
}

// readPartitions reads the partitions named by the partition key
// restrictions, in token order.
func (r *selectRun) readPartitions(c *Coordinator) error {
	p, t := r.p, r.p.t
	combos, err := evalKeys(t, p.keys.pk, t.pk, r.x)
	if err != nil {
		return err
	}
	var one [1]part
	parts := one[:0]
	if len(combos) > 1 {
		parts = make([]part, 0, len(combos))
	}
	for _, vals := range combos {
		parts = append(parts, part{pk: t.partitionKey(vals), vals: vals})
	}
	// Cassandra answers IN on the partition key in the order of the key
	// values (its MultiCBuilder sorts them), not in token order.
	if len(parts) > 1 {
		for i := range parts {
			for c, v := range parts[i].vals {
				parts[i].order, _ = storage.AppendKey(parts[i].order, t.st.PartitionTypes[c], v, false)
			}
		}
		sortParts(parts)
	}
	slices := []storage.Slice{{}}
	if p.ckFilters {
		if slices, err = p.keys.slices(t, r.x); err != nil {
			return err
		}
	}
	if p.reverse {
		for i, j := 0, len(slices)-1; i < j; i, j = i+1, j-1 {
			slices[i], slices[j] = slices[j], slices[i]
		}
	}
	started := r.resume == nil
	for _, pt := range parts {
		if !started {
			if !bytes.Equal(pt.pk, r.resume.pk) {
				continue
			}
			started = true
		}
		r.startPartition(pt.pk, pt.vals)
		stop := false
		for si, s := range slices {
			o := storage.ReadOptions{Slice: s, Reverse: p.reverse, Now: r.now, Tombstones: r.tombstones}
			first := si == 0
			fn := func(row *storage.Row) bool {
				if row.Static {
					if first {
						r.static = row
					}
					return true
				}
				more := r.row(row)
				stop = !more
				return more
			}
			var err error
			if r.x.local {
				err = c.data.ReadLocal(r.x.ctx, r.x.opts.Consistency, t.st, pt.pk, o, fn)
			} else {
				err = c.source(t).ReadPartition(r.x.ctx, r.x.opts.Consistency, t.st, pt.pk, o, fn)
			}
			if err != nil {
				return err
			}
			if stop {
				return nil
			}
		}
		if !r.endPartition() {
			return nil
		}
	}
	return nil
}

// scan reads every partition in token order.
func (r *selectRun) scan(c *Coordinator) error {
	t := r.p.t
	o := storage.ScanOptions{Now: r.now, Tombstones: r.tombstones}
	if r.resume != nil {
		o.FromPartition = r.resume.pk
	}
	lo, hi, any, err := r.p.keys.tokenRange(r.x)
	if err != nil || !any {
		return err
	}
	o.MinToken, o.MaxToken = lo, hi
	// Without the partition key, clustering restrictions (ALLOW
	// FILTERING) filter each row.
	var within []clusteringRange
	if r.p.ckFilters {
		slices, err := r.p.keys.slices(t, r.x)
		if err != nil {
			return err
		}
		if within, err = t.clusteringRanges(slices); err != nil {
			return err
		}
	}
	stopped := false
	scan := func(t *storage.Table, o storage.ScanOptions, fn func([]byte, *storage.Row) bool) error {
		return c.source(r.p.t).Scan(r.x.ctx, r.x.opts.Consistency, t, o, fn)
	}
	if v, err := r.indexValue(); err != nil {
		return err
	} else if v != nil {
		scan = func(t *storage.Table, o storage.ScanOptions, fn func([]byte, *storage.Row) bool) error {
			return c.source(r.p.t).ScanIndex(r.x.ctx, r.x.opts.Consistency, t, r.p.index.name, v, o, fn)
		}
	}
	err = scan(t.st, o, func(pk []byte, row *storage.Row) bool {
		if r.pk == nil || !bytes.Equal(pk, r.pk) {
			if r.pk != nil && !r.endPartition() {
				stopped = true
				return false
			}
			vals, err := t.splitPartitionKey(pk)
			if err != nil {
				return false
			}
			r.startPartition(pk, vals)
		}
		if row.Static {
			r.static = row
			return true
		}
		if within != nil && !t.inRanges(row.Clustering, within) {
			return true
		}
		more := r.row(row)
		if !more {
			stopped = true
		}
		return more
	})
	if err != nil {
		return err
	}
	if !stopped && r.pk != nil {
		r.endPartition()
	}
	return nil
}

func (r *selectRun) startPartition(pk []byte, vals [][]byte) {
	r.pk, r.pkVals, r.static, r.inPart, r.anyRow = pk, vals, nil, 0, false
	if r.resume != nil && r.skipping && !bytes.Equal(pk, r.resume.pk) {
		r.skipping = false
	}
	if r.ppl >= 0 && r.resume != nil && r.skipping {
		r.inPart = r.ppl - r.resume.pRemaining
	}
}

// row handles one live row; it reports whether to go on.
func (r *selectRun) row(row *storage.Row) bool {
	p := r.p
	if p.distinct {
		r.anyRow = true // DISTINCT answers once per partition, at its end
		return true
	}
	if r.skipping {
		if r.resume.ck == nil {
			return true // the static-only row of this partition was sent
		}
		c := p.t.compareClustering(row.Clustering, r.resume.ck)
		if (!p.reverse && c <= 0) || (p.reverse && c >= 0) {
			r.anyRow = true
			return true
		}
		r.skipping = false
		r.anyRow = true
	}
	r.anyRow = true
	if r.ppl >= 0 && r.inPart >= r.ppl && !p.aggregates() {
		return true // skip the rest of this partition
	}
	vals, ok := r.values(row)
	if !ok {
		return true
	}
	return r.emit(vals, row.Clustering)
}

// endPartition emits the static-only row of a partition that had no rows;
// it reports whether to go on.
func (r *selectRun) endPartition() bool {
	p := r.p
	skip := r.skipping
	r.skipping = false
	if p.distinct {
		if r.static != nil || r.anyRow {
			if skip {
				return !r.done()
			}
			if vals, ok := r.values(&storage.Row{}); ok {
				return r.emit(vals, nil)
			}
		}
		return !r.done()
	}
	if r.anyRow || r.static == nil || p.ckFilters || skip {
		return !r.done()
	}
	if vals, ok := r.values(&storage.Row{}); ok {
		return r.emit(vals, nil)
	}
	return !r.done()
}

// emit takes the inputs of one selected row; it reports whether to go on.
func (r *selectRun) emit(vals [][]byte, ck [][]byte) bool {
	p := r.p
	if p.sel != nil {
		if p.sel.aggregate {
			return r.fold(vals, ck)
		}
		out, err := p.sel.row(r.sctx, vals)
		if err != nil {
			r.err = err
			return false
		}
		vals = out
	}
	if p.json != nil {
		vals = [][]byte{p.json.Row(vals)}
	}
	if !r.fits(rowSize(vals)) {
		return false
	}
	r.inPart++
	if r.limit > 0 {
		r.limit--
	}
	if r.rows == nil {
		r.rows = r.firstRow[:0]
	}
	r.rows = append(r.rows, vals)
	r.last.pk, r.last.ck, r.last.inPart = r.pk, ck, r.inPart
	if p.orderAfter > 0 {
		var key []byte
		if ck != nil {
			key, _ = p.t.encodeClustering(ck[:p.orderAfter])
		}
		r.orderKeys = append(r.orderKeys, key)
	}
	if r.pageSize > 0 && int32(len(r.rows)) >= r.pageSize && r.limit != 0 {
		pr := int32(-1)
		if r.ppl >= 0 {
			pr = r.ppl - r.inPart
		}
		r.next = &pageState{pk: r.pk, ck: ck, remaining: r.limit, pRemaining: pr}
	}
	return !r.done()
}

// fold adds a row to the group it belongs to, outputting the previous
// group when a new one starts; it reports whether to go on. LIMIT and PER
// PARTITION LIMIT count groups.
func (r *selectRun) fold(vals [][]byte, ck [][]byte) bool {
	sel, a := r.p.sel, r.agg
	if sel.groupCK >= 0 {
		samePart := a.open && bytes.Equal(a.pk, r.pk)
		if !samePart || !sameGroup(a.ck, ck, sel.groupCK) {
			if a.open && !r.flushGroup() {
				return false
			}
			// r.inPart counts the groups started in this partition.
			if r.ppl >= 0 && r.inPart >= r.ppl {
				return true
			}
			r.inPart++
			a.open, a.first, a.pk = true, vals, r.pk
			a.ck = nil
			if ck != nil {
				a.ck = ck[:min(sel.groupCK, len(ck))]
			}
			clear(a.states)
		}
	} else if !a.open {
		a.open, a.first = true, vals
	}
	if err := sel.add(r.sctx, vals, a.states); err != nil {
		r.err = err
		return false
	}
	return true
}

// flushGroup outputs the current group; it reports whether to go on.
func (r *selectRun) flushGroup() bool {
	a := r.agg
	out, err := r.p.sel.output(r.sctx, a.first, a.states)
	a.open, a.first = false, nil
	if err != nil {
		r.err = err
		return false
	}
	if r.p.json != nil {
		out = [][]byte{r.p.json.Row(out)}
	}
	if !r.fits(rowSize(out)) {
		return false
	}
	r.rows = append(r.rows, out)
	if r.limit > 0 {
		r.limit--
	}
	return r.limit != 0
}

// values builds a result row, or reports that filters reject it.
func (r *selectRun) values(row *storage.Row) ([][]byte, bool) {
	p, t := r.p, r.p.t
	get := func(ci int) (storage.Cell, []storage.ColumnCell, bool) {
		col := &t.cols[ci]
		src := row
		if col.isStatic() {
			src = r.static
		}
		if src == nil {
			return storage.Cell{}, nil, false
		}
		var cells []storage.ColumnCell
		for _, cc := range src.Cells {
			if cc.Column == col.def.Name {
				if !col.multiCell() {
					return cc.Cell, nil, true
				}
				cells = append(cells, cc)
			}
		}
		return storage.Cell{}, cells, len(cells) > 0
	}
	value := func(ci int) []byte {
		col := &t.cols[ci]
		switch col.def.Kind {
		case storage.KindPartitionKey:
			for i, pc := range t.pk {
				if pc == ci {
					return r.pkVals[i]
				}
			}
		case storage.KindClustering:
			if row.Clustering == nil {
				return nil
			}
			for i, cc := range t.ck {
				if cc == ci {
					return row.Clustering[i]
				}
			}
		}
		cell, cells, ok := get(ci)
		if !ok {
			return nil
		}
		if col.multiCell() {
			return t.assembleCollection(col, cells)
		}
		return cell.Value
	}
	for i, f := range p.keys.filters {
		if !matchFilter(t.cols[f.col].typ, f.op, value(f.col), r.filters[i]) {
			return nil, false
		}
	}
	if len(p.proj) == 0 {
		return nil, true
	}
	out := make([][]byte, len(p.proj))
	for i, pr := range p.proj {
		switch pr.kind {
		case projValue:
			out[i] = value(pr.col)
		case projWritetime:
			if cell, _, ok := get(pr.col); ok {
				out[i] = binary.BigEndian.AppendUint64(nil, uint64(cell.Timestamp))
			}
		case projTTL:
			if cell, _, ok := get(pr.col); ok && cell.TTL > 0 {
				left := cell.LocalDeletionTime - r.now
				out[i] = binary.BigEndian.AppendUint32(nil, uint32(left))
			}
		}
	}
	return out, true
}

// applyMetadataRules follows Cassandra's ExecuteMessage: v4 drops the
// metadata when the client asked to skip it; v5 sends the new metadata id
// and full metadata when the client's id is stale, else honours skip.
func applyMetadataRules(md *message.RowsMetadata, id []byte, x *execution) {
	if x.prepared == nil {
		return
	}
	if x.version >= primitive.ProtocolVersion5 && !bytes.Equal(x.reqMetaID, id) {
		md.NewResultMetadataId = id
		return
	}
	if x.opts.SkipMetadata {
		md.Columns = nil
	}
}

// indexValue is the value an index query looks up, or nil when it cannot
// use the index (an empty value, which is not indexed, or an index still
// building): then it scans.
func (r *selectRun) indexValue() ([]byte, error) {
	ix := &r.p.index
	if ix.name == "" {
		return nil, nil
	}
	for _, d := range r.p.t.def.Indexes {
		if d.Name == ix.name && d.Building {
			return nil, nil
		}
	}
	vs, err := ix.value.eval(r.x)
	if err != nil {
		return nil, err
	}
	if ix.elements != nil {
		for _, v := range vs {
			if v == nil {
				return nil, nil
			}
		}
		v, err := ix.elements(r.p.t, vs)
		if err != nil || len(v) == 0 {
			return nil, err
		}
		return v, nil
	}
	if len(vs) != 1 || len(vs[0]) == 0 {
		return nil, nil
	}
	return vs[0], nil
}
