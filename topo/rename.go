package topo

import (
	"fmt"
	"regexp"
)

var labNameRe = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)

// Rename gives a loaded Spec another lab name (emuctl up --name), checking
// the name as the schema does.
func Rename(s *Spec, name string) error {
	if !labNameRe.MatchString(name) {
		return fmt.Errorf("--name %q: invalid lab name (valid: 1-32 of a-z 0-9 _ -, starting with a letter or digit, no dots)", name)
	}
	if s.MACName == "" && name != s.Name {
		s.MACName = s.Name // MACs keep the name they were derived from
	}
	s.Name = name
	return nil
}
