package api

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
)

// An in-process client calls the same table as the pipe: the same
// results, the same errors.
func TestClient(t *testing.T) {
	c := NewClient(context.Background(), Options{}, nil)
	defer c.Close()
	res, err := c.Call(context.Background(), "methods", nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	if json.Unmarshal(res, &names); !slices.Equal(names, MethodNames()) {
		t.Errorf("methods: %s", res)
	}
	if _, err := c.Call(context.Background(), "nope", nil); err == nil || err.Code != CodeNoMethod {
		t.Errorf("an unknown method: %v", err)
	}
	if _, err := c.Call(context.Background(), "link.set", json.RawMessage(`{"link":"0","bogus":1}`)); err == nil || err.Code != CodeInvalidParams {
		t.Errorf("an unknown key: %v", err)
	}
}
