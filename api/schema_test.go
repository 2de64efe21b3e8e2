package api

import (
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

// jsonFields are the JSON names of a params struct's fields, embedded
// structs flattened.
func jsonFields(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			out = append(out, jsonFields(f.Type)...)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			name = f.Name
		}
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// TestSchemaMatchesMethods: every method served is in schema.json with
// exactly the params it decodes, and the schema has no method that is not
// served.
func TestSchemaMatchesMethods(t *testing.T) {
	var doc struct {
		Methods map[string]struct {
			Summary string                     `json:"summary"`
			Params  map[string]json.RawMessage `json:"params"`
		} `json:"methods"`
		Errors map[string]struct {
			Kind string `json:"kind"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(Schema, &doc); err != nil {
		t.Fatalf("schema.json: %v", err)
	}
	var inSchema []string
	for name := range doc.Methods {
		inSchema = append(inSchema, name)
	}
	sort.Strings(inSchema)
	if served := MethodNames(); !slices.Equal(served, inSchema) {
		t.Errorf("methods served and in schema.json differ:\n served %v\n schema %v", served, inSchema)
	}
	for name, m := range methods {
		sm, ok := doc.Methods[name]
		if !ok {
			continue
		}
		if sm.Summary == "" {
			t.Errorf("%s: no summary", name)
		}
		var keys []string
		for k := range sm.Params {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if got := jsonFields(m.params); !slices.Equal(got, keys) {
			t.Errorf("%s: params decoded %v, schema.json %v", name, got, keys)
		}
	}
	for code, kind := range codeKinds {
		if e, ok := doc.Errors[itoa(code)]; !ok || e.Kind != kind {
			t.Errorf("error %d (%s) not in schema.json as such: %+v", code, kind, e)
		}
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }
