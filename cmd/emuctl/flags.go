package main

import "github.com/spf13/pflag"

// unitFlag registers a typed flag (a units value: a rate, a delay, a
// percentage, a size), so a bad value is refused while the flags are
// parsed, with the parser's message naming the flag. A zero default is
// not shown in the help ("(default 0bit)" says nothing).
func unitFlag(fs *pflag.FlagSet, v pflag.Value, name, short, usage string) {
	fs.VarP(v, name, short, usage)
	switch fl := fs.Lookup(name); fl.DefValue {
	case "0bit", "0%", "0b", "0s":
		fl.DefValue = ""
	}
}
