package emulator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// DefaultSDKRoot is where the Debian and RPM google-cloud-cli packages install the
// Cloud SDK.
const DefaultSDKRoot = "/usr/lib/google-cloud-sdk"

// JavaPackage is the Debian package that provides the Java runtime the emulators
// need (they require Java 11 or later; Cloud SDK 528 warns below 21).
const JavaPackage = "openjdk-17-jre-headless"

// gcloudInfoTimeout bounds `gcloud info`, a Python program that takes about 2s.
const gcloudInfoTimeout = 30 * time.Second

// ErrNotInstalled is wrapped by the error of a Start function when the emulator or
// Java is not installed; the error's text names the Debian packages to install.
var ErrNotInstalled = errors.New("emulator not installed")

// ErrUnsupportedOS is wrapped by every Start on a system without Unix process
// groups (Windows): the emulators run as children that must not outlive the
// process that started them (internal/childproc), which needs them.
var ErrUnsupportedOS = errors.New("starting Google's emulators is supported on Linux and macOS")

// NotInstalledError says which emulator could not be found, where it was looked for,
// and which Debian packages provide what is missing. It matches ErrNotInstalled
// under errors.Is.
type NotInstalledError struct {
	Emulator string   // "Pub/Sub emulator", "Datastore emulator", ...
	Packages []string // Debian packages to install, e.g. google-cloud-cli-pubsub-emulator
	Reason   string   // what was missing, e.g. "no /usr/lib/google-cloud-sdk/platform/pubsub-emulator"
}

func (e *NotInstalledError) Error() string {
	return fmt.Sprintf("%s is not installed (%s): install the Debian package %s",
		e.Emulator, e.Reason, strings.Join(e.Packages, " and "))
}

// Is reports whether target is ErrNotInstalled.
func (e *NotInstalledError) Is(target error) bool { return target == ErrNotInstalled }

// sdkRoots lists the candidate Cloud SDK roots, best first, without duplicates.
func sdkRoots(ctx context.Context, explicit string) []string {
	if explicit != "" {
		return []string{explicit}
	}
	var roots []string
	add := func(r string) {
		if r == "" {
			return
		}
		for _, have := range roots {
			if have == r {
				return
			}
		}
		roots = append(roots, r)
	}
	if gcloud, err := exec.LookPath("gcloud"); err == nil {
		// A packaged or unpacked SDK puts gcloud at <root>/bin/gcloud (Debian links
		// /usr/bin/gcloud there); only when that does not lead to a platform/
		// directory is the slower gcloud info asked.
		if real, err := filepath.EvalSymlinks(gcloud); err == nil {
			root := filepath.Dir(filepath.Dir(real))
			if isDir(filepath.Join(root, "platform")) {
				add(root)
			}
		}
		if len(roots) == 0 {
			add(gcloudSDKRoot(ctx, gcloud))
		}
	}
	add(DefaultSDKRoot)
	return roots
}

// gcloudSDKRoot asks gcloud for its SDK root; it returns "" when gcloud fails.
func gcloudSDKRoot(ctx context.Context, gcloud string) string {
	ctx, cancel := context.WithTimeout(ctx, gcloudInfoTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, gcloud, "info", "--format=value(installation.sdk_root)").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// findJava returns the java binary: $JAVA, else $JAVA_HOME/bin/java, else java on PATH.
func findJava(name string) (string, error) {
	missing := func(reason string) error {
		return &NotInstalledError{Emulator: name, Packages: []string{JavaPackage}, Reason: reason}
	}
	if j := os.Getenv("JAVA"); j != "" {
		p, err := exec.LookPath(j)
		if err != nil {
			return "", missing(fmt.Sprintf("JAVA=%s: %v", j, err))
		}
		return p, nil
	}
	if home := os.Getenv("JAVA_HOME"); home != "" {
		p := filepath.Join(home, "bin", "java")
		if _, err := exec.LookPath(p); err != nil {
			return "", missing(fmt.Sprintf("JAVA_HOME=%s: %v", home, err))
		}
		return p, nil
	}
	p, err := exec.LookPath("java")
	if err != nil {
		return "", missing("no java on PATH")
	}
	return p, nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
