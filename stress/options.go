package stress

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gocql/gocql"
)

// ErrUsage marks a command line that cannot be run.
var ErrUsage = errors.New("stress: usage")

// Weighted is a named weight, as in ratio(write=1,read=3).
type Weighted struct {
	Name   string
	Weight int
}

// Config is a parsed command line. Parse fills in every default.
type Config struct {
	Command  string // write, update, read, mixed, counter_write, counter_read, cas, serial_read, user
	Args     []string
	N        int64         // operations per run (or per sweep step); 0 means bounded by Duration
	Duration time.Duration // per run or per sweep step
	Ratio    []Weighted    // mixed: ratio(write=1,read=3); user: ops(insert=1,q1=2)
	Profile  string        // user: the YAML profile

	Threads    int // closed loop, or the workers of an open loop
	ThreadsMin int // sweep when ThreadsMax > 0
	ThreadsMax int
	FixedRate  float64 // operations per second on a schedule; 0 means closed loop
	// Throttle paces at FixedRate but measures latency from each
	// operation's actual start, as cassandra-stress's throttle=; fixed=
	// measures it from the intended start.
	Throttle bool

	Pop      Dist // key population
	PopGiven bool
	ColSize  Dist // value size in bytes

	Keyspace    string
	Replication string // the CQL map literal

	CL       gocql.Consistency
	SerialCL gocql.SerialConsistency

	Prepared bool
	// Lean (-mode lean) drives the load over cqlclient instead of gocql:
	// one connection per thread, one request in flight on each.
	Lean bool
	// PrepareBatch prepares the statements ahead in one CQLD_PREPARE_BATCH
	// request per node when the node offers it (-mode prepareBatch=off).
	PrepareBatch bool
	ProtoVersion int
	Compression  string // "", lz4, snappy
	Connections  int
	connsGiven   bool
	PageSize     int
	Timeout      time.Duration
	Coalesce     time.Duration
	User         string
	Password     string

	Nodes      []string
	DataCenter string // -node datacenter=: route to this data center's nodes
	Retries    int    // -errors retries=: driver retries before an operation counts as failed

	// WarmupN or WarmupDuration run the workload unmeasured first.
	WarmupN        int64
	WarmupDuration time.Duration

	Interval  time.Duration
	JSONFile  string
	HDRFile   string
	ChartFile string
	Title     string
	MaxErrors int64
	Populate  int64 // rows to write before the measured run; 0 none
	Seed      uint64
}

// Sweep reports whether the run steps through thread counts.
func (c *Config) Sweep() bool { return c.ThreadsMax > 0 }

// Steps is the thread count of each step: one for a plain run; powers of
// two from ThreadsMin to ThreadsMax for a sweep.
func (c *Config) Steps() []int {
	if !c.Sweep() {
		return []int{c.Threads}
	}
	var s []int
	for t := c.ThreadsMin; t < c.ThreadsMax; t *= 2 {
		s = append(s, t)
	}
	return append(s, c.ThreadsMax)
}

var commands = map[string]bool{
	"write": true, "update": true, "read": true, "mixed": true, "counter_write": true,
	"counter_read": true, "cas": true, "serial_read": true, "user": true,
}

// options that take their sub-arguments up to the next "-name".
var groups = map[string]bool{
	"rate": true, "pop": true, "col": true, "schema": true, "mode": true,
	"node": true, "log": true, "populate": true, "errors": true,
}

// options that take exactly one value.
var single = map[string]bool{
	"cl": true, "serial-cl": true, "json": true, "hdrfile": true, "chart": true,
	"max-errors": true, "title": true, "seed": true,
}

// defaultTimeout is the default of -mode timeout=.
const defaultTimeout = 12 * time.Second

// Parse reads a command line in cassandra-stress's shape:
//
//	write n=100000 cl=ONE -rate threads=16 -pop seq=1..100000 -col size=fixed(34)
//
// args excludes the program name. Errors wrap ErrUsage.
func Parse(args []string) (*Config, error) {
	c := &Config{
		Threads: 8, ColSize: Fixed(34), Keyspace: "keyspace1",
		Replication: "{'class': 'SimpleStrategy', 'replication_factor': 1}",
		CL:          gocql.LocalOne, SerialCL: gocql.Serial, Prepared: true, PrepareBatch: true,
		ProtoVersion: 4, Connections: 2, PageSize: 5000, Timeout: defaultTimeout,
		Coalesce: 200 * time.Microsecond, Nodes: []string{"127.0.0.1"},
		Interval: time.Second, Seed: 1,
	}
	c.Args = append([]string(nil), args...)
	if len(args) == 0 {
		return nil, fmt.Errorf("%w: no command (write, update, read, mixed, counter_write, counter_read, cas, serial_read, user, chart)", ErrUsage)
	}
	c.Command = strings.ToLower(args[0])
	if !commands[c.Command] {
		return nil, fmt.Errorf("%w: unknown command %q", ErrUsage, args[0])
	}
	i := 1
	for ; i < len(args) && !strings.HasPrefix(args[i], "-"); i++ {
		if err := c.commandArg(args[i]); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrUsage, args[i], err)
		}
	}
	for i < len(args) {
		name := strings.TrimLeft(args[i], "-")
		i++
		switch {
		case single[name]:
			if i >= len(args) {
				return nil, fmt.Errorf("%w: -%s needs a value", ErrUsage, name)
			}
			if err := c.set(name, args[i]); err != nil {
				return nil, fmt.Errorf("%w: -%s %s: %v", ErrUsage, name, args[i], err)
			}
			i++
		case groups[name]:
			var sub []string
			for ; i < len(args) && !strings.HasPrefix(args[i], "-"); i++ {
				sub = append(sub, args[i])
			}
			if err := c.groupOpt(name, sub); err != nil {
				return nil, fmt.Errorf("%w: -%s: %v", ErrUsage, name, err)
			}
		default:
			return nil, fmt.Errorf("%w: unknown option -%s", ErrUsage, name)
		}
	}
	return c, c.finish()
}

func (c *Config) commandArg(a string) error {
	switch {
	case strings.HasPrefix(a, "ratio(") || strings.HasPrefix(a, "ops("):
		w, err := parseWeights(a)
		c.Ratio = w
		return err
	}
	k, v, ok := strings.Cut(a, "=")
	if !ok {
		return errors.New("want name=value")
	}
	switch k = strings.ToLower(k); k {
	case "n", "duration", "cl", "serial-cl", "serial_cl", "profile", "warmup":
		return c.set(k, v)
	}
	return fmt.Errorf("unknown parameter %q (n, duration, warmup, cl, serial-cl, profile, ratio(...), ops(...))", k)
}

func (c *Config) groupOpt(name string, sub []string) error {
	if name == "node" {
		c.Nodes = nil
		for _, s := range sub {
			if dc, ok := strings.CutPrefix(s, "datacenter="); ok {
				c.DataCenter = dc
				continue
			}
			for _, h := range strings.Split(s, ",") {
				if h = strings.TrimSpace(h); h != "" {
					c.Nodes = append(c.Nodes, h)
				}
			}
		}
		if len(c.Nodes) == 0 {
			return errors.New("no host given")
		}
		return nil
	}
	if name == "populate" && len(sub) == 0 {
		c.Populate = -1
		return nil
	}
	for _, s := range sub {
		if err := c.groupArg(name, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

func (c *Config) groupArg(group, a string) error {
	lower := strings.ToLower(a)
	if group == "mode" {
		switch lower {
		case "prepared":
			c.Prepared = true
			return nil
		case "simple", "unprepared", "simplenative":
			c.Prepared = false
			return nil
		case "native", "cql3":
			return nil
		case "gocql", "lean":
			c.Lean = lower == "lean"
			return nil
		}
	}
	if group == "schema" && strings.HasPrefix(lower, "replication(") {
		return c.replication(a)
	}
	if group == "rate" && strings.HasPrefix(lower, "threads>=") {
		return setInt(&c.ThreadsMin, a[len("threads>="):])
	}
	if group == "rate" && strings.HasPrefix(lower, "threads<=") {
		return setInt(&c.ThreadsMax, a[len("threads<="):])
	}
	k, v, ok := strings.Cut(a, "=")
	if !ok {
		return errors.New("want name=value")
	}
	return c.set(group+"."+strings.ToLower(k), v)
}

// set sets one setting: a command parameter or single-value option by its
// name ("n", "json"), an option group's argument as "group.name".
func (c *Config) set(key, v string) error {
	var err error
	switch key {
	case "n":
		c.N, err = parseCount(v)
	case "duration":
		c.Duration, err = parseDuration(v)
	case "cl":
		c.CL, err = gocql.ParseConsistencyWrapper(strings.ToUpper(v))
	case "serial-cl", "serial_cl":
		err = c.SerialCL.UnmarshalText([]byte(strings.ToUpper(v)))
	case "profile":
		c.Profile = v
	case "warmup":
		// a count, or a time with its unit (30s)
		if c.WarmupN, err = parseCount(v); err != nil {
			c.WarmupDuration, err = time.ParseDuration(v)
		}
	case "errors.retries":
		err = setInt(&c.Retries, v)
	case "json":
		c.JSONFile = v
	case "hdrfile", "log.hdrfile":
		c.HDRFile = v
	case "chart":
		c.ChartFile = v
	case "title":
		c.Title = v
	case "max-errors":
		c.MaxErrors, err = parseCount(v)
	case "seed":
		c.Seed, err = strconv.ParseUint(v, 10, 64)
	case "rate.threads":
		if lo, hi, ok := strings.Cut(v, ".."); ok {
			if err = setInt(&c.ThreadsMin, lo); err == nil {
				err = setInt(&c.ThreadsMax, hi)
			}
			return err
		}
		return setInt(&c.Threads, v)
	case "rate.fixed", "rate.throttle":
		c.Throttle = key == "rate.throttle"
		v = strings.TrimSuffix(v, "/s")
		var r int64
		r, err = parseCount(v)
		c.FixedRate = float64(r)
		if err == nil && r == 0 {
			err = errors.New("rate must be > 0")
		}
	case "pop.seq":
		lo, hi, e := parseRange(v)
		c.Pop, err, c.PopGiven = Seq(lo, hi), e, true
	case "pop.dist":
		c.Pop, err = ParseDist(v)
		c.PopGiven = true
	case "col.size":
		c.ColSize, err = ParseDist(v)
		if err == nil && c.ColSize.Kind == "seq" {
			err = errors.New("a value size cannot be a sequence")
		}
	case "schema.keyspace":
		c.Keyspace = v
	case "mode.protocolversion":
		err = setInt(&c.ProtoVersion, v)
	case "mode.compression":
		c.Compression = strings.ToLower(v)
		if c.Compression == "none" {
			c.Compression = ""
		}
		if c.Compression != "" && c.Compression != "lz4" && c.Compression != "snappy" {
			err = errors.New("compression is lz4, snappy or none")
		}
	case "mode.connections", "mode.connectionsperhost":
		err = setInt(&c.Connections, v)
		c.connsGiven = true
	case "mode.pagesize":
		err = setInt(&c.PageSize, v)
	case "mode.timeout":
		c.Timeout, err = parseDuration(v)
	case "mode.preparebatch":
		switch strings.ToLower(v) {
		case "on", "auto", "true":
			c.PrepareBatch = true
		case "off", "false":
			c.PrepareBatch = false
		default:
			return fmt.Errorf("prepareBatch=%s: want on or off", v)
		}
	case "mode.coalesce":
		c.Coalesce, err = time.ParseDuration(v)
	case "mode.user":
		c.User = v
	case "mode.password":
		c.Password = v
	case "log.interval":
		c.Interval, err = parseDuration(v)
	case "populate.n":
		c.Populate, err = parseCount(v)
	default:
		group, name, _ := strings.Cut(key, ".")
		return fmt.Errorf("unknown -%s argument %q", group, name)
	}
	return err
}

// replication turns replication(factor=3) or
// replication(strategy=NetworkTopologyStrategy, dc1=3) into a CQL map.
func (c *Config) replication(a string) error {
	if !strings.HasSuffix(a, ")") {
		return errors.New("want replication(factor=N) or replication(strategy=S, dc=N, ...)")
	}
	body := a[len("replication(") : len(a)-1]
	class, factor := "SimpleStrategy", "1"
	var dcs []string
	for _, kv := range strings.Split(body, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return fmt.Errorf("%q: want name=value", kv)
		}
		switch strings.ToLower(k) {
		case "strategy", "class":
			class = v
		case "factor", "replication_factor":
			factor = v
		default:
			dcs = append(dcs, fmt.Sprintf("'%s': %s", k, v))
		}
	}
	if strings.Contains(class, "NetworkTopology") {
		c.Replication = fmt.Sprintf("{'class': '%s', %s}", class, strings.Join(dcs, ", "))
	} else {
		c.Replication = fmt.Sprintf("{'class': '%s', 'replication_factor': %s}", class, factor)
	}
	return nil
}

// finish checks the combination and fills defaults that depend on it.
func (c *Config) finish() error {
	if c.N == 0 && c.Duration == 0 {
		return fmt.Errorf("%w: give n=COUNT or duration=TIME: every run is bounded", ErrUsage)
	}
	if c.N > 0 && c.Duration > 0 {
		return fmt.Errorf("%w: give n= or duration=, not both", ErrUsage)
	}
	if c.Threads < 1 {
		return fmt.Errorf("%w: threads must be >= 1", ErrUsage)
	}
	if (c.ThreadsMin > 0) != (c.ThreadsMax > 0) {
		return fmt.Errorf("%w: a sweep needs both threads>=MIN and threads<=MAX", ErrUsage)
	}
	if c.Sweep() && (c.ThreadsMin < 1 || c.ThreadsMax < c.ThreadsMin) {
		return fmt.Errorf("%w: sweep bounds threads>=%d threads<=%d", ErrUsage, c.ThreadsMin, c.ThreadsMax)
	}
	if c.Sweep() && c.FixedRate > 0 {
		return fmt.Errorf("%w: a thread sweep is a closed loop; drop fixed= or throttle=", ErrUsage)
	}
	if !c.Lean && c.ProtoVersion != 3 && c.ProtoVersion != 4 {
		return fmt.Errorf("%w: protocolVersion %d: gocql v1.7.0 speaks protocol v3 and v4 (its v5 is a pre-release draft; -mode lean speaks v5)", ErrUsage, c.ProtoVersion)
	}
	if c.Interval <= 0 {
		return fmt.Errorf("%w: -log interval must be > 0", ErrUsage)
	}
	switch c.Command {
	case "mixed":
		if len(c.Ratio) == 0 {
			c.Ratio = []Weighted{{"write", 1}, {"read", 1}}
		}
		for _, w := range c.Ratio {
			if !builtinKinds[w.Name] {
				return fmt.Errorf("%w: ratio: unknown operation %q (write, update, read, counter_write, counter_read, cas, serial_read)", ErrUsage, w.Name)
			}
		}
	case "user":
		if c.Profile == "" {
			return fmt.Errorf("%w: user needs profile=FILE.yaml", ErrUsage)
		}
		if len(c.Ratio) == 0 {
			return fmt.Errorf("%w: user needs ops(insert=1,QUERY=N,...)", ErrUsage)
		}
	default:
		c.Ratio = []Weighted{{c.Command, 1}}
	}
	if c.Lean {
		if err := c.checkLean(); err != nil {
			return err
		}
	}
	if !c.PopGiven {
		// cassandra-stress: a bounded write covers 1..n once; anything else
		// draws from a gaussian over a million keys.
		if c.Command == "write" && c.N > 0 {
			c.Pop = Seq(1, c.N)
		} else {
			c.Pop = Dist{Kind: "gaussian", Min: 1, Max: 1000000, Param: 3}
		}
	}
	if c.Populate < 0 {
		c.Populate = c.Pop.Size()
	}
	return nil
}

// checkLean refuses what the lean mode does not do: it is a plain client
// for measuring the server (no compression, authentication, retries, data
// center routing or conditional writes), with one connection per thread.
func (c *Config) checkLean() error {
	refuse := func(what string) error {
		return fmt.Errorf("%w: -mode lean does not support %s (the gocql mode does)", ErrUsage, what)
	}
	switch {
	case c.ProtoVersion != 4 && c.ProtoVersion != 5:
		return fmt.Errorf("%w: protocolVersion %d: -mode lean speaks protocol v4 and v5", ErrUsage, c.ProtoVersion)
	case c.connsGiven:
		return fmt.Errorf("%w: -mode lean opens one connection per thread: give -rate threads=N, not connections=", ErrUsage)
	case c.Command == "user":
		return refuse("user profiles")
	case c.Compression != "":
		return refuse("compression")
	case c.User != "":
		return refuse("authentication")
	case c.Retries > 0:
		return refuse("-errors retries=")
	case c.DataCenter != "":
		return refuse("-node datacenter=")
	}
	for _, w := range c.Ratio {
		if w.Name == "cas" || w.Name == "serial_read" {
			return refuse(w.Name)
		}
	}
	return nil
}

// parseWeights parses ratio(a=1,b=3) or ops(a=1,b=3).
func parseWeights(a string) ([]Weighted, error) {
	open := strings.IndexByte(a, '(')
	if !strings.HasSuffix(a, ")") {
		return nil, errors.New("want name(op=weight,...)")
	}
	var ws []Weighted
	for _, kv := range strings.Split(a[open+1:len(a)-1], ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return nil, fmt.Errorf("%q: want op=weight", kv)
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q: weight must be a non-negative integer", kv)
		}
		if n > 0 {
			ws = append(ws, Weighted{strings.TrimSpace(k), n})
		}
	}
	if len(ws) == 0 {
		return nil, errors.New("no operation with a positive weight")
	}
	return ws, nil
}

func setInt(dst *int, s string) error {
	v, err := parseCount(s)
	if err != nil {
		return err
	}
	*dst = int(v)
	return nil
}

// parseDuration takes Go durations and cassandra-stress's bare seconds.
func parseDuration(s string) (time.Duration, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(s)
	if err == nil && d <= 0 {
		err = errors.New("duration must be > 0")
	}
	return d, err
}
