package config

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Flags are the command-line overrides AddFlags defined on a FlagSet.
type Flags struct {
	fs     *flag.FlagSet
	values map[string]*flagValue
	// seeds is -seeds: SimpleSeedProvider's seeds parameter.
	seeds *flagValue
}

// flagValue holds a flag's text until Apply parses it, so that a bad value
// is reported the way the same value in the file would be, naming the key.
type flagValue struct{ text string }

func (v *flagValue) String() string {
	if v == nil { // flag.PrintDefaults probes a zero value
		return ""
	}
	return v.text
}

func (v *flagValue) Set(s string) error { v.text = s; return nil }

// AddFlags defines one flag per key on fs, named like the key: -rpc_address,
// -native_transport_port, -commitlog_sync, and so on, including the legacy
// *_in_ms / *_in_mb names. List keys take a comma-separated value.
// seed_provider, a structure, has no flag of its own: -seeds sets
// SimpleSeedProvider's seeds parameter.
func AddFlags(fs *flag.FlagSet) *Flags {
	d := Default()
	f := &Flags{fs: fs, values: map[string]*flagValue{}, seeds: &flagValue{text: d.SeedProvider.Parameters["seeds"]}}
	fs.Var(f.seeds, "seeds", "seed nodes, comma-separated host[:storage_port] (seed_provider: SimpleSeedProvider)")
	for _, k := range keys() {
		switch k.field(&d).(type) {
		case *SeedProvider, *ClientEncryptionOptions, *ServerEncryptionOptions:
			continue // structures: no flag
		}
		v := &flagValue{}
		if k.legacy == notLegacy { // -help shows the default under the current name only
			v.text = formatValue(k.field(&d))
		}
		fs.Var(v, k.name, k.usage)
		f.values[k.name] = v
	}
	return f
}

// Apply overrides c with the flags given on the command line (after
// fs.Parse), parsing each as the same value in the file would be parsed,
// then validates. Flags not given leave c alone. On error c is unchanged.
func (f *Flags) Apply(c *Config) error {
	given := map[string]string{}
	f.fs.Visit(func(fl *flag.Flag) {
		if v, ok := f.values[fl.Name]; ok && fl.Value == flag.Value(v) {
			given[fl.Name] = v.text
		}
	})

	// Work on a copy so that a bad flag cannot leave c half-applied. Every
	// setter replaces slices and maps rather than writing into them.
	next := *c
	origins := map[string]origin{}
	var errs []error
	f.fs.Visit(func(fl *flag.Flag) {
		if fl.Value == flag.Value(f.seeds) {
			next.SeedProvider = SeedProvider{ClassName: "org.apache.cassandra.locator.SimpleSeedProvider", Parameters: map[string]string{"seeds": f.seeds.text}}
			origins["seed_provider"] = origin{"seeds", "flag -seeds"}
		}
	})
	for _, k := range keys() {
		text, ok := given[k.name]
		if !ok {
			continue
		}
		where := "flag -" + k.name
		if o, dup := origins[k.current()]; dup {
			errs = append(errs, &keyError{k.name, where, fmt.Errorf("conflicts with -%s; set only -%s", o.key, k.current())})
			continue
		}
		origins[k.current()] = origin{k.name, where}
		if err := setKey(&next, k, flagNode(k, text)); err != nil {
			errs = append(errs, &keyError{k.name, where, err})
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := next.validate(origins); err != nil {
		return err
	}
	*c = next
	return nil
}

// flagNode turns a flag's text into the YAML node the same value would be
// in the file. Scalars are tagged as strings, as if quoted, so that "null"
// or "" on the command line is taken literally rather than as a YAML null.
func flagNode(k key, text string) *yaml.Node {
	var probe Config
	if _, ok := k.field(&probe).(*[]string); !ok {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: text}
	}
	seq := &yaml.Node{Kind: yaml.SequenceNode}
	if text == "" {
		return seq
	}
	for _, s := range strings.Split(text, ",") {
		seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: strings.TrimSpace(s)})
	}
	return seq
}

// formatValue writes a field's value the way its flag takes it.
func formatValue(p any) string {
	switch p := p.(type) {
	case *string:
		return *p
	case *int:
		return strconv.Itoa(*p)
	case *bool:
		return strconv.FormatBool(*p)
	case *float64:
		return strconv.FormatFloat(*p, 'g', -1, 64)
	case *[]string:
		return strings.Join(*p, ",")
	case fmt.Stringer: // Duration, DataSize
		return p.String()
	}
	return ""
}
