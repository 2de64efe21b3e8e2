package testutil

import (
	"reflect"
	"testing"
)

func TestMine(t *testing.T) {
	all := []string{"netns tsu-1.h1", "interface h1-eth0 (emuctl:tsu-1)", "state dir /run/emuctl/tsu-1",
		"netns ttr9.h1", "process 12 (emuctl:other)", "hosts link /etc/netns/tsuite.h1"}
	got := Mine(all, "tsu-")
	want := []string{"netns tsu-1.h1", "interface h1-eth0 (emuctl:tsu-1)", "state dir /run/emuctl/tsu-1"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Mine(tsu-) = %q, want %q", got, want)
	}
	if got := Mine(all, "ttr", "nothing"); !reflect.DeepEqual(got, []string{"netns ttr9.h1"}) {
		t.Errorf("Mine(ttr) = %q", got)
	}
}
