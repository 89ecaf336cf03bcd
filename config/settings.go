package config

import (
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Setting is one key of the configuration and its value as
// system_views.settings shows it; Value is nil for a key with none.
type Setting struct {
	Name  string
	Value *string
}

// masked is the value shown for a secret.
const masked = "********"

// Settings returns every key of c with its value, by name, as Cassandra's
// SettingsTable shows its configuration: a key of a nested map (the
// encryption options, seed_provider's parameters) as parent_key, a list
// as Java prints one ("[a, b]"), and passwords masked.
func (c Config) Settings() ([]Setting, error) {
	b, err := yaml.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("config: settings: %w", err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("config: settings: %w", err)
	}
	var out []Setting
	var add func(prefix string, v any)
	add = func(name string, v any) {
		switch v := v.(type) {
		case nil:
			out = append(out, Setting{Name: name})
		case map[string]any:
			for k, e := range v {
				add(name+"_"+k, e)
			}
		case []any:
			if len(v) == 1 {
				if inner, ok := v[0].(map[string]any); ok {
					// seed_provider's one-entry list of a map
					add(name, inner)
					return
				}
			}
			parts := make([]string, len(v))
			for i, e := range v {
				parts[i] = fmt.Sprint(e)
			}
			s := "[" + strings.Join(parts, ", ") + "]"
			out = append(out, Setting{Name: name, Value: &s})
		default:
			s := fmt.Sprint(v)
			if strings.Contains(name, "password") && s != "" {
				s = masked
			}
			out = append(out, Setting{Name: name, Value: &s})
		}
	}
	for k, v := range m {
		add(k, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
