//go:build unix

package emulator_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"cloud.google.com/go/datastore"
	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"

	"github.com/oncegate/oncegate/internal/emulator"
	"github.com/oncegate/oncegate/internal/testenv"
)

// start starts an emulator for this test only and stops it when the test ends. A
// missing installation skips the test, or fails it under CI=true.
func start(t *testing.T, fn func(context.Context, emulator.Options) (*emulator.Emulator, error)) *emulator.Emulator {
	t.Helper()
	e, err := fn(t.Context(), emulator.Options{Dir: t.TempDir(), Logf: t.Logf})
	if errors.Is(err, emulator.ErrNotInstalled) {
		testenv.Missing(t, "%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Stop(); err != nil {
			t.Error(err)
		}
	})
	return e
}

// stopped checks that the emulator's process is gone and its port refuses
// connections.
func stopped(t *testing.T, e *emulator.Emulator) {
	t.Helper()
	if err := syscall.Kill(e.PID(), 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("after Stop, kill(%d, 0) = %v; want ESRCH", e.PID(), err)
	}
	if c, err := net.DialTimeout("tcp", e.Host(), time.Second); err == nil {
		c.Close()
		t.Errorf("after Stop, %s still accepts connections", e.Host())
	}
}

type thing struct{ N int }

// datastoreRoundTrip puts and gets one entity through the real client library.
func datastoreRoundTrip(t *testing.T, e *emulator.Emulator) {
	t.Helper()
	ctx := t.Context()
	c, err := datastore.NewClient(ctx, e.Project(), emulator.ClientOptions(e.Host())...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	k := datastore.NameKey("Thing", "a", nil)
	if _, err := c.Put(ctx, k, &thing{N: 7}); err != nil {
		t.Fatalf("Put: %v", err)
	}
	var got thing
	if err := c.Get(ctx, k, &got); err != nil || got.N != 7 {
		t.Fatalf("Get = %+v, %v; want {N:7}", got, err)
	}
}

func TestDatastore(t *testing.T) {
	e := start(t, emulator.StartDatastore)
	if err := emulator.Ping(t.Context(), e.Host()); err != nil {
		t.Fatalf("Ping(%s): %v", e.Host(), err)
	}
	datastoreRoundTrip(t, e)
	if err := e.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	stopped(t, e)
	if err := e.Stop(); err != nil {
		t.Errorf("second Stop = %v; want nil", err)
	}
}

func TestDatastoreFirestoreMode(t *testing.T) {
	e := start(t, emulator.StartDatastoreFirestoreMode)
	datastoreRoundTrip(t, e)
	if err := e.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	stopped(t, e)
}

func TestFirestoreDatastoreMode(t *testing.T) {
	e := start(t, emulator.StartFirestoreDatastoreMode)
	datastoreRoundTrip(t, e)
	if err := e.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	stopped(t, e)
}

func TestPubSub(t *testing.T) {
	e := start(t, emulator.StartPubSub)
	ctx := t.Context()
	c, err := pubsub.NewClient(ctx, e.Project(), emulator.ClientOptions(e.Host())...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	name := "projects/" + e.Project() + "/topics/launcher"
	if _, err := c.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: name}); err != nil {
		t.Fatalf("CreateTopic: %v", err)
	}
	if _, err := c.TopicAdminClient.GetTopic(ctx, &pubsubpb.GetTopicRequest{Topic: name}); err != nil {
		t.Fatalf("GetTopic: %v", err)
	}
	if err := e.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	stopped(t, e)
}

// TestStopReportsCrash: an emulator that died on its own is reported by Stop, with
// its log, rather than passed over.
func TestStopReportsCrash(t *testing.T) {
	e, err := emulator.StartDatastore(t.Context(), emulator.Options{Dir: t.TempDir()})
	if errors.Is(err, emulator.ErrNotInstalled) {
		testenv.Missing(t, "%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(e.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-e.Exited()
	err = e.Stop()
	if err == nil || !strings.Contains(err.Error(), "exited on its own") || !strings.Contains(err.Error(), "API endpoint") {
		t.Fatalf("Stop after a crash = %v; want an error saying it exited, with the log", err)
	}
}

func TestNotInstalled(t *testing.T) {
	empty := t.TempDir()
	for _, tt := range []struct {
		name  string
		start func(context.Context, emulator.Options) (*emulator.Emulator, error)
		pkg   string
	}{
		{"pubsub", emulator.StartPubSub, "google-cloud-cli-pubsub-emulator"},
		{"datastore", emulator.StartDatastore, "google-cloud-cli-datastore-emulator"},
		{"firestore", emulator.StartFirestoreDatastoreMode, "google-cloud-cli-firestore-emulator"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.start(t.Context(), emulator.Options{Dir: t.TempDir(), SDKRoot: empty})
			if !errors.Is(err, emulator.ErrNotInstalled) || !strings.Contains(err.Error(), tt.pkg) || !strings.Contains(err.Error(), empty) {
				t.Fatalf("Start with SDK root %s = %v; want ErrNotInstalled naming %s and the root", empty, err, tt.pkg)
			}
			var nie *emulator.NotInstalledError
			if !errors.As(err, &nie) || len(nie.Packages) != 1 || nie.Packages[0] != tt.pkg {
				t.Fatalf("error %v: want a *NotInstalledError with Packages [%s]", err, tt.pkg)
			}
		})
	}
	t.Run("java", func(t *testing.T) {
		t.Setenv("JAVA", empty+"/no-java")
		_, err := emulator.StartDatastore(t.Context(), emulator.Options{Dir: t.TempDir()})
		if !errors.Is(err, emulator.ErrNotInstalled) || !strings.Contains(err.Error(), emulator.JavaPackage) {
			t.Fatalf("Start without java = %v; want ErrNotInstalled naming %s", err, emulator.JavaPackage)
		}
	})
	t.Run("no dir", func(t *testing.T) {
		_, err := emulator.StartDatastore(t.Context(), emulator.Options{})
		if err == nil || !strings.Contains(err.Error(), "Options.Dir") {
			t.Fatalf("Start without Dir = %v; want an error naming Options.Dir", err)
		}
	})
}

// TestCanceledStart: a start whose ctx ends before the emulator answers returns
// the ctx error and leaves no process behind.
func TestCanceledStart(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	_, err := emulator.StartDatastore(ctx, emulator.Options{Dir: dir})
	if errors.Is(err, emulator.ErrNotInstalled) {
		testenv.Missing(t, "%v", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Start with a 200ms deadline = %v; want context.DeadlineExceeded", err)
	}
	out, _ := exec.Command("pgrep", "-f", "--", "datastore.*"+dir).Output()
	if len(strings.TrimSpace(string(out))) != 0 {
		t.Fatalf("java processes left after a canceled start: %s", out)
	}
}

// TestDiesWithParent: an emulator is SIGKILLed by the kernel when the process that
// started it dies without stopping it (Linux's parent-death signal).
func TestDiesWithParent(t *testing.T) {
	if os.Getenv("EMULATOR_TEST_CHILD") == "1" {
		e, err := emulator.StartDatastore(context.Background(), emulator.Options{Dir: os.Getenv("EMULATOR_TEST_DIR")})
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println("pid", e.PID())
		select {} // killed by the parent test
	}
	if _, err := exec.LookPath("java"); err != nil {
		testenv.Missing(t, "%v", err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestDiesWithParent$")
	cmd.Env = append(os.Environ(), "EMULATOR_TEST_CHILD=1", "EMULATOR_TEST_DIR="+t.TempDir())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	f := strings.Fields(line)
	if len(f) < 2 || f[0] != "pid" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if strings.Contains(line, "not installed") {
			testenv.Missing(t, "%s", line)
		}
		t.Fatalf("child said %q; want pid N", line)
	}
	pid, _ := strconv.Atoi(f[1])
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	deadline := time.Now().Add(30 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			t.Fatalf("emulator pid %d still runs 30s after its parent was killed", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
