package suite

import (
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/emuctl/emuctl/topologies/suites"
)

// builtinDir is where the built-in suites live in the repository; their
// messages name that path.
const builtinDir = "topologies/suites/"

// Builtins lists the built-in suites by name.
func Builtins() []string {
	ents, _ := fs.ReadDir(suites.FS, ".")
	var out []string
	for _, e := range ents {
		if name, ok := strings.CutSuffix(e.Name(), ".yaml"); ok {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// LoadBuiltin loads a built-in suite by name.
func LoadBuiltin(name string) (*Suite, error) {
	data, err := suites.FS.ReadFile(name + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("no built-in suite %q (built in: %s)%s", name, strings.Join(Builtins(), ", "), didYouMean(name, Builtins()))
	}
	return Load(builtinDir+name+".yaml", data)
}

// Open loads a suite given as a built-in name or a file path: anything
// with a slash or a .yaml/.yml suffix, or an existing file, is a path.
func Open(arg string) (*Suite, error) {
	if strings.ContainsRune(arg, '/') || strings.HasSuffix(arg, ".yaml") || strings.HasSuffix(arg, ".yml") {
		return LoadFile(arg)
	}
	if st, err := os.Stat(arg); err == nil && !st.IsDir() {
		return LoadFile(arg)
	}
	return LoadBuiltin(arg)
}
