package proc

import (
	"os"
	"os/exec"
	"testing"
)

func TestStartAndAlive(t *testing.T) {
	s, err := Start(os.Getpid())
	if err != nil || s == 0 {
		t.Fatalf("Start(self) = %d, %v", s, err)
	}
	if !Alive(os.Getpid(), s) || !Alive(os.Getpid(), 0) {
		t.Error("this process is not alive")
	}
	if Alive(os.Getpid(), s+1) {
		t.Error("a later start time (a reused pid) counts as alive")
	}
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	if Alive(c.Process.Pid, 0) {
		t.Errorf("reaped child %d alive", c.Process.Pid)
	}
	if Alive(0, 0) || Alive(-1, 0) {
		t.Error("pid 0 or -1 alive")
	}
}
