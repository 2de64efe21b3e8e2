// Package validate holds emuctl's references written by nobody here:
// its own ns-3 programs (validate/ns3, C++ against the ns-3 3.37 API of
// Debian's libns3-dev, embedded in the binary so `emuctl test SUITE
// --reference ns3` can compile them anywhere g++ and libns3-dev are
// installed; no ns-3 source is copied) and the Go that builds and runs
// them. validate/wifi is the command checking the 802.11 model against
// ns-3.
//
// A program names the ns-3 libraries it links in a comment line
// ("// ns3-libs: point-to-point internet ..."); it prints one JSON line.
// BuildNS3 compiles a program once per source version (a hash of the
// sources and compiler flags, kept beside the binary); RunNS3 runs it.
//
// It changes nothing on the host but the build directory it is given.
package validate

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

//go:embed ns3/*.cc ns3/*.h
var embedded embed.FS

// sources is the ns3 directory.
var sources, _ = fs.Sub(embedded, "ns3")

// ErrNS3Missing is returned (wrapped) when the machine lacks g++ or
// libns3-dev.
var ErrNS3Missing = errors.New("ns-3 programs cannot be built")

// NS3InstallHint is how to get what Build needs on Debian/Ubuntu.
const NS3InstallHint = "apt-get install libns3-dev g++"

// header is a file libns3-dev (ns-3 3.37) installs.
const header = "/usr/include/ns3/core-module.h"

// ProbeNS3 says whether programs can be built here: nil, or ErrNS3Missing
// wrapped with what is missing and how to install it.
func ProbeNS3() error {
	var missing []string
	if _, err := exec.LookPath("g++"); err != nil {
		missing = append(missing, "g++ (not on PATH)")
	}
	if _, err := os.Stat(header); err != nil {
		missing = append(missing, "libns3-dev ("+header+" not found)")
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: missing %s: %s", ErrNS3Missing, strings.Join(missing, " and "), NS3InstallHint)
	}
	return nil
}

// NS3Programs lists the embedded programs that declare their libraries
// (wifi-ref.cc is built by validate/wifi, which names its own).
func NS3Programs() []string {
	var out []string
	entries, _ := fs.ReadDir(sources, ".")
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".cc")
		if !ok {
			continue
		}
		if libs, _ := libsOf(name); len(libs) > 0 {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// libsOf reads a program's "// ns3-libs:" line.
func libsOf(name string) ([]string, error) {
	src, err := fs.ReadFile(sources, name+".cc")
	if err != nil {
		return nil, fmt.Errorf("no ns-3 program %q (known: %s)", name, strings.Join(NS3Programs(), ", "))
	}
	sc := bufio.NewScanner(bytes.NewReader(src))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "// ns3-libs:"); ok {
			return strings.Fields(rest), nil
		}
	}
	return nil, nil
}

// BuildNS3 compiles program name into dir/name unless the binary there was
// built from the same sources and flags; built says whether it compiled.
// The sources are written to a temporary directory next to the binary.
func BuildNS3(ctx context.Context, name, dir string) (bin string, built bool, err error) {
	if err := ProbeNS3(); err != nil {
		return "", false, err
	}
	libs, err := libsOf(name)
	if err != nil {
		return "", false, err
	}
	if len(libs) == 0 {
		return "", false, fmt.Errorf("%s.cc names no libraries (a \"// ns3-libs:\" line)", name)
	}
	args := []string{"-O2", "-std=c++17", "-Wall"}
	link := []string{"-Wl,--no-as-needed"}
	for _, l := range libs {
		link = append(link, "-lns3-"+l)
	}
	sum, err := digest(name, args, link)
	if err != nil {
		return "", false, err
	}
	bin = filepath.Join(dir, name)
	stamp := bin + ".sha256"
	if b, err := os.ReadFile(stamp); err == nil && strings.TrimSpace(string(b)) == sum {
		if _, err := os.Stat(bin); err == nil {
			return bin, false, nil
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", false, err
	}
	tmp, err := os.MkdirTemp(dir, "."+name+"-build-")
	if err != nil {
		return "", false, err
	}
	defer os.RemoveAll(tmp)
	if err := extract(tmp); err != nil {
		return "", false, err
	}
	out := filepath.Join(tmp, name)
	cmdArgs := append(append(append([]string{}, args...), "-I", tmp, "-o", out, filepath.Join(tmp, name+".cc")), link...)
	cmd := exec.CommandContext(ctx, "g++", cmdArgs...)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Run(); err != nil {
		return "", false, fmt.Errorf("g++ %s: %v\n%s", strings.Join(cmdArgs, " "), err, log.String())
	}
	// Rename into place: another emuctl building the same program at the
	// same time replaces it with an identical binary.
	if err := os.Rename(out, bin); err != nil {
		return "", false, err
	}
	return bin, true, os.WriteFile(stamp, []byte(sum+"\n"), 0o644)
}

// digest hashes every embedded source (a program may include any header)
// and the compiler flags.
func digest(name string, args, link []string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n", name, strings.Join(args, " "), strings.Join(link, " "))
	entries, err := fs.ReadDir(sources, ".")
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		b, err := fs.ReadFile(sources, e.Name())
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", e.Name(), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func extract(dir string) error {
	entries, err := fs.ReadDir(sources, ".")
	if err != nil {
		return err
	}
	for _, e := range entries {
		b, err := fs.ReadFile(sources, e.Name())
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// RunNS3 runs a built program with args and returns its one JSON line.
func RunNS3(ctx context.Context, bin string, args []string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("%s %s: %s", filepath.Base(bin), strings.Join(args, " "), msg)
	}
	line := bytes.TrimSpace(stdout.Bytes())
	if len(line) == 0 || line[0] != '{' || bytes.Count(line, []byte("\n")) > 0 {
		return nil, fmt.Errorf("%s %s: output is not one JSON line: %q", filepath.Base(bin), strings.Join(args, " "), clip(line))
	}
	return line, nil
}

func clip(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// NS3BinDir is where programs are built: bin/validate under the emuctl
// source tree containing the working directory (as `make validate-wifi`
// builds wifi-ref), else emuctl/ns3 in the user's cache directory.
func NS3BinDir() string {
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil {
				if strings.HasPrefix(string(b), "module github.com/emuctl/emuctl\n") {
					return filepath.Join(d, "bin", "validate")
				}
				break
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	if c, err := os.UserCacheDir(); err == nil {
		return filepath.Join(c, "emuctl", "ns3")
	}
	return filepath.Join(os.TempDir(), "emuctl-ns3")
}
