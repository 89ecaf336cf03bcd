package jsudf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"runtime/metrics"
	"sync"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/dop251/goja"

	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/statements/types"
)

// maxCallStack bounds a call's recursion, so a body that recurses without
// end fails with a stack overflow instead of growing the Go stack.
const maxCallStack = 4096

// Program is a compiled body. It is immutable and safe for concurrent
// use: each call runs in a runtime of its own.
type Program struct {
	prog *goja.Program
}

// Compile compiles a function's body. name is the function's, for the
// error's stack traces.
func Compile(name, body string) (*Program, error) {
	p, err := goja.Compile(name, body, false)
	if err != nil {
		return nil, err
	}
	return &Program{prog: p}, nil
}

// Limits bound one call.
type Limits struct {
	// Fail interrupts a call that runs longer; 0 means no limit.
	Fail time.Duration
	// AfterFunc runs f after d, as time.AfterFunc, and returns what stops
	// it; nil means time.AfterFunc.
	AfterFunc func(d time.Duration, f func()) (stop func() bool)
	// MaxHeapGrowth interrupts a call during which the process's heap
	// grew by more than this many bytes; 0 means DefaultMaxHeapGrowth.
	// The heap is the whole process's, so the bound is generous: it stops
	// a body that doubles a string until the node runs out of memory,
	// which the time limit alone lets reach gigabytes.
	MaxHeapGrowth uint64
}

// DefaultMaxHeapGrowth is the heap growth that interrupts a call.
const DefaultMaxHeapGrowth = 512 << 20

// heapWatchAfter is how long a call runs before its heap is watched, and
// heapWatchEvery how often it is read then: short calls pay nothing.
const (
	heapWatchAfter = 10 * time.Millisecond
	heapWatchEvery = 5 * time.Millisecond
)

// ErrTimeout is a call interrupted at its fail timeout.
var ErrTimeout = errors.New("jsudf: the call ran longer than its fail timeout")

// ErrMemory is a call interrupted because the heap grew too much during it.
var ErrMemory = errors.New("jsudf: the call allocated too much memory")

// Call runs p with args (serialized values of argTypes, nil for null)
// bound to names, and returns its result serialized as ret (nil for
// null or undefined).
func (p *Program) Call(names []string, argTypes []datatype.DataType, args [][]byte, ret datatype.DataType, lim Limits) (out []byte, err error) {
	rt := goja.New()
	rt.SetMaxCallStackSize(maxCallStack)
	for i, name := range names {
		v, err := toJS(rt, argTypes[i], args[i])
		if err != nil {
			return nil, fmt.Errorf("argument %s: %w", name, err)
		}
		if err := rt.Set(name, v); err != nil {
			return nil, err
		}
	}
	after := lim.AfterFunc
	if after == nil {
		after = func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }
	}
	if lim.Fail > 0 {
		stop := after(lim.Fail, func() { rt.Interrupt(ErrTimeout) })
		defer stop()
	}
	growth := lim.MaxHeapGrowth
	if growth == 0 {
		growth = DefaultMaxHeapGrowth
	}
	w := &heapWatch{base: heapBytes(), max: growth, rt: rt, done: make(chan struct{})}
	stopWatch := after(heapWatchAfter, w.start)
	defer func() {
		stopWatch()
		w.stop()
	}()
	res, err := rt.RunProgram(p.prog)
	if err != nil {
		var so *goja.StackOverflowError
		if errors.As(err, &so) {
			return nil, fmt.Errorf("stack overflow: more than %d nested calls", maxCallStack)
		}
		var ie *goja.InterruptedError
		if errors.As(err, &ie) {
			if e, ok := ie.Value().(error); ok {
				return nil, e
			}
		}
		return nil, err
	}
	return fromJS(rt, ret, res)
}

// heapWatch interrupts a call whose heap growth passes max: started by a
// timer once the call has run heapWatchAfter, it reads the heap every
// heapWatchEvery until the call ends.
type heapWatch struct {
	base, max uint64
	rt        *goja.Runtime
	mu        sync.Mutex
	done      chan struct{}
	stopped   bool
	wg        sync.WaitGroup
}

func (w *heapWatch) start() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		t := time.NewTicker(heapWatchEvery)
		defer t.Stop()
		for {
			select {
			case <-w.done:
				return
			case <-t.C:
				if h := heapBytes(); h > w.base && h-w.base > w.max {
					w.rt.Interrupt(ErrMemory)
					return
				}
			}
		}
	}()
}

// stop ends the watch and waits for its goroutine.
func (w *heapWatch) stop() {
	w.mu.Lock()
	w.stopped = true
	close(w.done)
	w.mu.Unlock()
	w.wg.Wait()
}

// heapBytes is the bytes of live and unswept heap objects, read without
// stopping the world.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// ---- CQL to JavaScript ----

func toJS(rt *goja.Runtime, t datatype.DataType, v []byte) (goja.Value, error) {
	if v == nil {
		return goja.Null(), nil
	}
	switch t.Code() {
	case primitive.DataTypeCodeAscii, primitive.DataTypeCodeVarchar, primitive.DataTypeCodeText:
		return rt.ToValue(string(v)), nil
	case primitive.DataTypeCodeBoolean:
		return rt.ToValue(len(v) > 0 && v[0] != 0), nil
	case primitive.DataTypeCodeTinyint, primitive.DataTypeCodeSmallint, primitive.DataTypeCodeInt,
		primitive.DataTypeCodeBigint, primitive.DataTypeCodeCounter, primitive.DataTypeCodeTime:
		n, ok := types.IntValue(v)
		if !ok {
			return nil, fmt.Errorf("malformed %s", typeName(t))
		}
		return rt.ToValue(n), nil
	case primitive.DataTypeCodeFloat, primitive.DataTypeCodeDouble:
		f, ok := types.FloatValue(t, v)
		if !ok {
			return nil, fmt.Errorf("malformed %s", typeName(t))
		}
		return rt.ToValue(f), nil
	case primitive.DataTypeCodeDecimal:
		unscaled, scale, ok := types.DecodeDecimal(v)
		if !ok {
			return nil, fmt.Errorf("malformed decimal")
		}
		f, _ := new(big.Float).SetInt(unscaled).Float64()
		return rt.ToValue(f / math.Pow10(int(scale))), nil
	case primitive.DataTypeCodeVarint:
		return rt.ToValue(types.DecodeVarint(v)), nil
	case primitive.DataTypeCodeTimestamp:
		if len(v) != 8 {
			return nil, fmt.Errorf("malformed timestamp")
		}
		return dateOf(rt, int64(binary.BigEndian.Uint64(v)))
	case primitive.DataTypeCodeDate:
		if len(v) != 4 {
			return nil, fmt.Errorf("malformed date")
		}
		return dateOf(rt, (int64(binary.BigEndian.Uint32(v))-1<<31)*86400000)
	case primitive.DataTypeCodeBlob:
		return rt.ToValue(rt.NewArrayBuffer(append([]byte(nil), v...))), nil
	case primitive.DataTypeCodeList, primitive.DataTypeCodeSet:
		et := elementType(t)
		var elems []any
		err := types.WalkCollection(v, func(b []byte) error {
			e, err := toJS(rt, et, b)
			elems = append(elems, e)
			return err
		}, nil)
		if err != nil {
			return nil, err
		}
		return rt.NewArray(elems...), nil
	case primitive.DataTypeCodeMap:
		mt := t.(*datatype.Map)
		m, err := rt.New(rt.Get("Map"))
		if err != nil {
			return nil, err
		}
		set, _ := goja.AssertFunction(m.Get("set"))
		var key goja.Value
		err = types.WalkCollection(v, func(b []byte) (err error) {
			key, err = toJS(rt, mt.KeyType, b)
			return err
		}, func(b []byte) error {
			val, err := toJS(rt, mt.ValueType, b)
			if err != nil {
				return err
			}
			_, err = set(m, key, val)
			return err
		})
		if err != nil {
			return nil, err
		}
		return m, nil
	case primitive.DataTypeCodeTuple:
		ft := t.(*datatype.Tuple).FieldTypes
		fields := types.SplitFields(v, len(ft))
		elems := make([]any, len(ft))
		for i, f := range fields {
			e, err := toJS(rt, ft[i], f)
			if err != nil {
				return nil, err
			}
			elems[i] = e
		}
		return rt.NewArray(elems...), nil
	case primitive.DataTypeCodeUdt:
		ut := t.(*datatype.UserDefined)
		fields := types.SplitFields(v, len(ut.FieldTypes))
		o := rt.NewObject()
		for i, f := range fields {
			e, err := toJS(rt, ut.FieldTypes[i], f)
			if err != nil {
				return nil, err
			}
			if err := o.Set(ut.FieldNames[i], e); err != nil {
				return nil, err
			}
		}
		return o, nil
	}
	// uuid, timeuuid, inet, duration: as CQL prints them.
	return rt.ToValue(types.ValueString(t, v)), nil
}

func dateOf(rt *goja.Runtime, ms int64) (goja.Value, error) {
	return rt.New(rt.Get("Date"), rt.ToValue(ms))
}

func elementType(t datatype.DataType) datatype.DataType {
	switch c := t.(type) {
	case *datatype.List:
		return c.ElementType
	case *datatype.Set:
		return c.ElementType
	}
	return nil
}

func typeName(t datatype.DataType) string { return statements.TypeString(t, false) }
