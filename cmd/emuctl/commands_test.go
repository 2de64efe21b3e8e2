package main

import (
	"slices"
	"testing"
)

// TestCommandsRegistered: newRoot's one list holds every command, in the
// README's order, each once.
func TestCommandsRegistered(t *testing.T) {
	want := []string{"validate", "up", "down", "ls", "wifi", "inspect", "exec", "shell", "cli", "mn", "mininet", "clean", "doctor",
		"verify", "node", "link", "schedule", "mptcp", "traffic", "capture", "model", "report", "test", "api", "ui", "bench", "version"}
	var got []string
	for _, c := range newRoot().Commands() {
		got = append(got, c.Name())
	}
	if !slices.Equal(got, want) {
		t.Errorf("commands:\n got %v\nwant %v", got, want)
	}
}
