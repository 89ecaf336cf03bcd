package stress

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/cqlclient"
)

// errNoAnswer marks a lean request the server did not answer within
// -mode timeout=.
var errNoAnswer = errors.New("stress: no answer within the timeout")

// leanPool holds the connections of the lean mode (-mode lean): worker i
// owns connection i, dialled to the nodes in turn, and has one request in
// flight on it at a time, as redis-benchmark -P 1 does. The connections
// outlive the steps, so a sweep, a warm-up and populating reuse them. A
// watchdog closes a connection whose request has waited longer than the
// timeout; the request fails with errNoAnswer and the connection's next
// request dials again.
type leanPool struct {
	cfg      *Config
	addrs    []string
	prepared []map[string]*cqlclient.Prepared // per address; read-only once made
	now      func() time.Time

	mu    sync.Mutex // guards conns against the watchdog
	conns []*leanConn

	stop chan struct{}
	wg   sync.WaitGroup
}

// newLeanPool makes the pool for c, with prepared (per address in addrs)
// the statements prepared ahead, and starts its watchdog; close stops it.
func newLeanPool(c *Config, addrs []string, prepared []map[string]*cqlclient.Prepared) *leanPool {
	p := &leanPool{cfg: c, addrs: addrs, prepared: prepared, now: time.Now, stop: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.watch()
	}()
	return p
}

// dialOptions are the cqlclient options of a lean connection.
func dialOptions(c *Config) cqlclient.Options {
	return cqlclient.Options{Version: primitive.ProtocolVersion(c.ProtoVersion), DisablePrepareBatch: !c.PrepareBatch, Serial: true,
		DialTimeout: min(c.Timeout, 10*time.Second)}
}

// grow dials connections until there are n. Not safe for concurrent use
// with conn.
func (p *leanPool) grow(ctx context.Context, n int) error {
	for i := len(p.conns); i < n; i++ {
		node := i % len(p.addrs)
		lc := &leanConn{pool: p, addr: p.addrs[node], prepared: map[string]*cqlclient.Prepared{}}
		for q, st := range p.prepared[node] {
			lc.prepared[q] = st
		}
		lc.opts = cqlclient.QueryOptions{Consistency: primitive.ConsistencyLevel(p.cfg.CL), PageSize: int32(p.cfg.PageSize)}
		cl, err := cqlclient.Dial(ctx, lc.addr, dialOptions(p.cfg))
		if err != nil {
			return fmt.Errorf("stress: lean connection %d: %w", i+1, err)
		}
		lc.conn.Store(cl)
		p.mu.Lock()
		p.conns = append(p.conns, lc)
		p.mu.Unlock()
	}
	return nil
}

// conn is worker i's connection; grow made it.
func (p *leanPool) conn(i int) *leanConn { return p.conns[i] }

// close stops the watchdog and closes every connection.
func (p *leanPool) close() {
	close(p.stop)
	p.wg.Wait()
	for _, lc := range p.conns {
		if cl := lc.conn.Swap(nil); cl != nil {
			cl.Close()
		}
	}
}

// watch runs expire four times per timeout until close.
func (p *leanPool) watch() {
	t := time.NewTicker(max(p.cfg.Timeout/4, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.expire(p.now())
		}
	}
}

// expire closes the connections whose request was sent more than the
// timeout before now.
func (p *leanPool) expire(now time.Time) {
	limit := now.Add(-p.cfg.Timeout).UnixNano()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, lc := range p.conns {
		if s := lc.since.Load(); s != 0 && s < limit {
			if cl := lc.conn.Load(); cl != nil {
				lc.timedOut.Store(true)
				cl.Close()
			}
		}
	}
}

// leanConn is one lean connection and the buffers its requests reuse. Only
// its worker uses it, apart from the watchdog's since, timedOut and conn.
type leanConn struct {
	pool     *leanPool
	addr     string
	conn     atomic.Pointer[cqlclient.Conn] // nil after it broke, until the next dial
	since    atomic.Int64                   // when the request in flight was sent (Unix ns); 0 for none
	timedOut atomic.Bool                    // the watchdog closed conn
	prepared map[string]*cqlclient.Prepared

	opts cqlclient.QueryOptions
	vals []primitive.Value
	ptrs []*primitive.Value
	ints []byte
}

// run sends stmt with vals, as an EXECUTE of its prepared form or, when
// prepared is false, as a QUERY; for each row of the answer (all its
// pages) it scans the columns into dest (*[]byte or *int64) and calls row.
func (l *leanConn) run(stmt string, prepared bool, vals, dest []any, row func() error) error {
	if err := l.bind(vals); err != nil {
		return err
	}
	l.opts.SkipMetadata = prepared
	l.opts.PagingState = nil
	for {
		res, err := l.send(stmt, prepared)
		if err != nil {
			return err
		}
		rows, ok := res.(*message.RowsResult)
		if !ok {
			if row != nil {
				return fmt.Errorf("stress: %s answered %v, not rows", stmt, res)
			}
			return nil
		}
		for _, r := range rows.Data {
			if err := scanRow(r, dest); err != nil {
				return fmt.Errorf("stress: %s: %w", stmt, err)
			}
			if row != nil {
				if err := row(); err != nil {
					return err
				}
			}
		}
		if rows.Metadata == nil || len(rows.Metadata.PagingState) == 0 {
			return nil
		}
		l.opts.PagingState = rows.Metadata.PagingState
	}
}

// send sends one request on the connection, dialling it first when it
// broke, and re-preparing once when the server forgot the statement.
func (l *leanConn) send(stmt string, prepared bool) (message.Result, error) {
	cl := l.conn.Load()
	if cl == nil {
		var err error
		if cl, err = cqlclient.Dial(context.Background(), l.addr, dialOptions(l.pool.cfg)); err != nil {
			return nil, err
		}
		l.conn.Store(cl)
	}
	l.since.Store(l.pool.now().UnixNano())
	res, err := l.request(cl, stmt, prepared)
	var se *cqlclient.ServerError
	if prepared && errors.As(err, &se) && se.Code == primitive.ErrorCodeUnprepared {
		delete(l.prepared, stmt)
		res, err = l.request(cl, stmt, prepared)
	}
	l.since.Store(0)
	if errors.Is(err, cqlclient.ErrClosed) {
		l.conn.CompareAndSwap(cl, nil)
		cl.Close()
		if l.timedOut.Swap(false) {
			err = fmt.Errorf("%w (%v) from %s: connection closed", errNoAnswer, l.pool.cfg.Timeout, l.addr)
		}
	}
	return res, err
}

func (l *leanConn) request(cl *cqlclient.Conn, stmt string, prepared bool) (message.Result, error) {
	ctx := context.Background() // the watchdog bounds the wait
	if !prepared {
		return cl.Query(ctx, stmt, &l.opts)
	}
	p := l.prepared[stmt]
	if p == nil {
		var err error
		if p, err = cl.Prepare(ctx, cqlclient.Statement{Query: stmt}); err != nil {
			return nil, err
		}
		l.prepared[stmt] = p
	}
	return cl.Execute(ctx, p, &l.opts)
}

// bind sets the request's positional values: blobs as they are, bigint and
// counter values as 8 bytes, nil as null. The buffers are reused by the
// next request.
func (l *leanConn) bind(vals []any) error {
	if cap(l.vals) < len(vals) {
		l.vals = make([]primitive.Value, len(vals))
		l.ptrs = make([]*primitive.Value, len(vals))
		l.ints = make([]byte, 0, 8*len(vals))
	}
	l.vals, l.ptrs, l.ints = l.vals[:len(vals)], l.ptrs[:len(vals)], l.ints[:0]
	for i, v := range vals {
		pv := &l.vals[i]
		*pv = primitive.Value{Type: primitive.ValueTypeRegular}
		switch v := v.(type) {
		case []byte:
			pv.Contents = v
		case int64:
			l.ints = binary.BigEndian.AppendUint64(l.ints, uint64(v)) // capacity for every value: no move
			pv.Contents = l.ints[len(l.ints)-8:]
		case nil:
			pv.Type = primitive.ValueTypeNull
		default:
			return fmt.Errorf("stress: the lean mode binds blob, bigint and counter values, not %T", v)
		}
		l.ptrs[i] = pv
	}
	l.opts.PositionalValues = l.ptrs
	if len(vals) == 0 {
		l.opts.PositionalValues = nil
	}
	return nil
}

// scanRow sets dest (as many as the row's columns or fewer) from one row:
// a *[]byte gets the column's bytes, a *int64 its bigint or counter value.
func scanRow(r message.Row, dest []any) error {
	if len(dest) > len(r) {
		return fmt.Errorf("row of %d columns, %d expected", len(r), len(dest))
	}
	for i, d := range dest {
		switch d := d.(type) {
		case *[]byte:
			*d = r[i]
		case *int64:
			switch len(r[i]) {
			case 0:
				*d = 0
			case 8:
				*d = int64(binary.BigEndian.Uint64(r[i]))
			default:
				return fmt.Errorf("column %d: %d bytes for a bigint", i+1, len(r[i]))
			}
		default:
			return fmt.Errorf("column %d: cannot scan into %T", i+1, d)
		}
	}
	return nil
}
