package emulator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/oncegate/oncegate/internal/childproc"
)

// DefaultProject is the project ID of an emulator started without Options.Project.
const DefaultProject = "test"

// DefaultStartTimeout bounds a start when Options.StartTimeout is zero: a JVM answers
// in about 3s on an idle 2-core machine and several times that under load.
const DefaultStartTimeout = 2 * time.Minute

// stopTimeout bounds a graceful stop (SIGTERM) before the process group is killed.
const stopTimeout = 10 * time.Second

// portAttempts is how many free ports a start tries: a port found free can be taken
// by another process before the JVM, seconds later, binds it.
const portAttempts = 3

// pollInterval is how often a starting emulator's log and health check are read.
const pollInterval = 100 * time.Millisecond

// pingTimeout bounds one health check during a start.
const pingTimeout = 2 * time.Second

// logTailBytes bounds how much of a log an error carries.
const logTailBytes = 4 << 10

// Options configures a Start function. Only Dir is required.
type Options struct {
	// Dir is the directory the emulator's log file, <name>-<port>.log, is written to;
	// it is created if missing and never removed by this package (a test passes
	// t.TempDir()).
	Dir string
	// Project is the project ID clients should use (DATASTORE_PROJECT_ID); the
	// emulators accept any project. Default DefaultProject.
	Project string
	// Logf, when set, gets one line when the emulator is up and one when it stops
	// (t.Logf, log.Printf).
	Logf func(format string, args ...any)
	// SDKRoot is the Cloud SDK root; empty means found as the package doc says.
	SDKRoot string
	// StartTimeout bounds the wait for the health check; zero means
	// DefaultStartTimeout. A ctx deadline also ends the wait.
	StartTimeout time.Duration
}

// kind says how to run one emulator.
type kind struct {
	name     string // "Pub/Sub emulator", for messages
	file     string // log file prefix
	dir      string // under <sdk>/platform
	pkg      string // Debian package that installs dir
	jar      func(dir string) (string, error)
	args     func(jar string, port int) []string
	upMarker func(port int) string // logged once the port is bound
}

var pubsubKind = &kind{
	name: "Pub/Sub emulator",
	file: "pubsub-emulator",
	dir:  "pubsub-emulator",
	pkg:  "google-cloud-cli-pubsub-emulator",
	jar: func(dir string) (string, error) {
		// The version is part of the name: lib/cloud-pubsub-emulator-0.8.20-all.jar.
		m, _ := filepath.Glob(filepath.Join(dir, "lib", "cloud-pubsub-emulator-*-all.jar"))
		if len(m) == 0 {
			return "", fmt.Errorf("no %s", filepath.Join(dir, "lib", "cloud-pubsub-emulator-*-all.jar"))
		}
		return m[len(m)-1], nil
	},
	args: func(jar string, port int) []string {
		return []string{"-jar", jar, "--host=127.0.0.1", "--port=" + strconv.Itoa(port)}
	},
	upMarker: func(port int) string { return "Server started, listening on " + strconv.Itoa(port) },
}

var datastoreKind = datastoreEmulator("Datastore emulator", "datastore-emulator", "--consistency=1.0")

var datastoreFirestoreModeKind = datastoreEmulator("Datastore emulator (Firestore in Datastore mode)",
	"datastore-firestore-mode-emulator", "--firestore_in_datastore_mode")

// datastoreEmulator runs CloudDatastore.jar in memory with modeFlag.
func datastoreEmulator(name, file, modeFlag string) *kind {
	return &kind{
		name: name,
		file: file,
		dir:  "cloud-datastore-emulator",
		pkg:  "google-cloud-cli-datastore-emulator",
		jar:  fileIn("CloudDatastore.jar"),
		args: func(jar string, port int) []string {
			return []string{"-cp", jar, "com.google.cloud.datastore.emulator.CloudDatastore", "start",
				"--testing", "--host=127.0.0.1", "--port=" + strconv.Itoa(port),
				"--store_on_disk=false", modeFlag}
		},
		upMarker: apiEndpoint,
	}
}

var firestoreKind = &kind{
	name: "Firestore emulator (Datastore mode)",
	file: "firestore-emulator",
	dir:  "cloud-firestore-emulator",
	pkg:  "google-cloud-cli-firestore-emulator",
	jar:  fileIn("cloud-firestore-emulator.jar"),
	args: func(jar string, port int) []string {
		return []string{"-Duser.language=en", "-cp", jar, "com.google.cloud.datastore.emulator.firestore.CloudFirestore", "start",
			"--host=127.0.0.1", "--port=" + strconv.Itoa(port), "--database-mode=datastore-mode"}
	},
	upMarker: apiEndpoint,
}

func fileIn(name string) func(dir string) (string, error) {
	return func(dir string) (string, error) {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("no %s", p)
		}
		return p, nil
	}
}

func apiEndpoint(port int) string { return "API endpoint: http://127.0.0.1:" + strconv.Itoa(port) }

// Emulator is one running emulator process. Its methods are safe for concurrent use.
type Emulator struct {
	kind    *kind
	host    string
	project string
	logPath string
	logf    func(format string, args ...any)
	cmd     *exec.Cmd
	done    chan struct{} // closed once the process has exited and been reaped
	waitErr error         // cmd.Wait's result, set before done is closed

	stopOnce sync.Once
	stopErr  error
}

// StartPubSub starts the Pub/Sub emulator (clients find it through
// PUBSUB_EMULATOR_HOST=Host()). It serves gRPC and REST on one port and accepts any
// project. The error wraps ErrNotInstalled when the emulator or Java is missing.
func StartPubSub(ctx context.Context, o Options) (*Emulator, error) {
	return start(ctx, pubsubKind, o)
}

// StartDatastore starts the Datastore emulator in memory with consistency 1.0 (every
// eventually consistent query sees every committed write); clients find it through
// DATASTORE_EMULATOR_HOST=Host() and DATASTORE_PROJECT_ID=Project(). The error wraps
// ErrNotInstalled when the emulator or Java is missing.
func StartDatastore(ctx context.Context, o Options) (*Emulator, error) {
	return start(ctx, datastoreKind, o)
}

// StartDatastoreFirestoreMode starts the Datastore emulator in memory with
// --firestore_in_datastore_mode (what `gcloud beta emulators datastore start
// --use-firestore-in-datastore-mode` runs): it behaves as Firestore in Datastore
// mode, the mode of every new production database, with strongly consistent queries
// and no ancestor rule for queries in transactions. Clients find it as they find
// StartDatastore's. The error wraps ErrNotInstalled when the emulator or Java is
// missing.
func StartDatastoreFirestoreMode(ctx context.Context, o Options) (*Emulator, error) {
	return start(ctx, datastoreFirestoreModeKind, o)
}

// StartFirestoreDatastoreMode starts the Firestore emulator with
// --database-mode=datastore-mode (Firestore in Datastore mode: strongly consistent
// queries, optimistic concurrency); Datastore clients find it as they find the
// Datastore emulator. The error wraps ErrNotInstalled when the emulator or Java is
// missing.
func StartFirestoreDatastoreMode(ctx context.Context, o Options) (*Emulator, error) {
	return start(ctx, firestoreKind, o)
}

// Host returns "127.0.0.1:port", the value of PUBSUB_EMULATOR_HOST or
// DATASTORE_EMULATOR_HOST.
func (e *Emulator) Host() string { return e.host }

// Project returns the project ID clients should use.
func (e *Emulator) Project() string { return e.project }

// LogPath returns the file the emulator's stdout and stderr go to.
func (e *Emulator) LogPath() string { return e.logPath }

// PID returns the emulator's process id (the leader of its process group).
func (e *Emulator) PID() int { return e.cmd.Process.Pid }

// Name returns what the emulator is, e.g. "Datastore emulator".
func (e *Emulator) Name() string { return e.kind.name }

// Exited returns a channel closed once the emulator process has ended, whether by
// Stop or on its own.
func (e *Emulator) Exited() <-chan struct{} { return e.done }

// Stop ends the emulator: SIGTERM to its process group, SIGKILL after 10s, and waits
// until it has exited. Later calls return the first call's result: nil, or an error
// saying the emulator had already exited on its own (with its log's tail).
func (e *Emulator) Stop() error {
	e.stopOnce.Do(func() {
		select {
		case <-e.done:
			e.stopErr = fmt.Errorf("%s on %s had exited on its own (%v); log %s:\n%s",
				e.kind.name, e.host, e.waitErr, e.logPath, tail(e.logPath))
			return
		default:
		}
		terminate(e.cmd.Process.Pid, e.done)
		if e.logf != nil {
			e.logf("emulator: stopped %s on %s", e.kind.name, e.host)
		}
	})
	return e.stopErr
}

func start(ctx context.Context, k *kind, o Options) (*Emulator, error) {
	if !supported {
		return nil, fmt.Errorf("%s on %s: %w", k.name, runtime.GOOS, ErrUnsupportedOS)
	}
	if o.Dir == "" {
		return nil, fmt.Errorf("%s: Options.Dir is empty (want the directory for its log)", k.name)
	}
	if o.Project == "" {
		o.Project = DefaultProject
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	java, err := findJava(k.name)
	if err != nil {
		return nil, err
	}
	jar, err := findJar(ctx, k, o.SDKRoot)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("%s: log dir: %w", k.name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, o.StartTimeout)
	defer cancel()
	for attempt := 1; ; attempt++ {
		e, err := startOnce(ctx, k, o, java, jar)
		if err == nil {
			if o.Logf != nil {
				o.Logf("emulator: %s on %s (pid %d, log %s)", k.name, e.host, e.PID(), e.logPath)
			}
			return e, nil
		}
		if !errors.Is(err, errPortTaken) || attempt == portAttempts {
			return nil, err
		}
	}
}

// findJar finds the emulator's jar under the first SDK root that has its directory.
func findJar(ctx context.Context, k *kind, explicitRoot string) (string, error) {
	var looked []string
	for _, root := range sdkRoots(ctx, explicitRoot) {
		dir := filepath.Join(root, "platform", k.dir)
		if !isDir(dir) {
			looked = append(looked, "no "+dir)
			continue
		}
		jar, err := k.jar(dir)
		if err != nil {
			looked = append(looked, err.Error())
			continue
		}
		return jar, nil
	}
	return "", &NotInstalledError{Emulator: k.name, Packages: []string{k.pkg}, Reason: strings.Join(looked, "; ")}
}

// errPortTaken says the emulator could not bind its port.
var errPortTaken = errors.New("port already in use")

// startOnce runs the emulator on one free port and waits for it to answer.
func startOnce(ctx context.Context, k *kind, o Options, java, jar string) (_ *Emulator, err error) {
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", k.name, err)
	}
	logPath := filepath.Join(o.Dir, fmt.Sprintf("%s-%d.log", k.file, port))
	logFile, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%s: log: %w", k.name, err)
	}
	defer logFile.Close() // the child has its own descriptor
	cmd := exec.Command(java, k.args(jar, port)...)
	cmd.Dir = o.Dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := childproc.Start(cmd, nil); err != nil {
		return nil, fmt.Errorf("%s: %w", k.name, err)
	}
	e := &Emulator{
		kind:    k,
		host:    net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		project: o.Project,
		logPath: logPath,
		logf:    o.Logf,
		cmd:     cmd,
		done:    make(chan struct{}),
	}
	go func() {
		e.waitErr = cmd.Wait()
		close(e.done)
	}()
	if err := e.awaitReady(ctx, k.upMarker(port)); err != nil {
		terminate(cmd.Process.Pid, e.done)
		return nil, fmt.Errorf("%s (%s) on %s: %w; log %s:\n%s", k.name, jar, e.host, err, logPath, tail(logPath))
	}
	return e, nil
}

// awaitReady waits until the log shows the port bound and GET / answers 200.
func (e *Emulator) awaitReady(ctx context.Context, marker string) error {
	client := &http.Client{
		Timeout:   pingTimeout,
		Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true},
	}
	defer client.CloseIdleConnections()
	var last error = errors.New("port not bound yet")
	for {
		log, _ := os.ReadFile(e.logPath)
		switch {
		case strings.Contains(string(log), "Address already in use"):
			return errPortTaken
		case strings.Contains(string(log), marker):
			// The marker is this process's own: another process that took the port
			// cannot make a health check pass before it.
			if last = healthy(ctx, client, e.host); last == nil {
				return nil
			}
		}
		select {
		case <-e.done:
			if strings.Contains(string(log), "Address already in use") {
				return errPortTaken
			}
			return fmt.Errorf("exited before answering: %v", e.waitErr)
		case <-ctx.Done():
			return fmt.Errorf("no answer: %w (last: %v)", ctx.Err(), last)
		case <-time.After(pollInterval):
		}
	}
}

// healthy GETs http://host/ and wants 200.
func healthy(ctx context.Context, client *http.Client, host string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+host+"/", nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET / answered %s", resp.Status)
	}
	return nil
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// tail returns the last logTailBytes of the file at path.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(unreadable: %v)", err)
	}
	if len(b) > logTailBytes {
		b = b[len(b)-logTailBytes:]
	}
	return string(b)
}

// Ping GETs http://host/, the emulators' health check, and returns nil when it
// answers 200 within ctx; the error says what answered instead. It ignores proxy
// settings.
func Ping(ctx context.Context, host string) error {
	client := &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	defer client.CloseIdleConnections()
	return healthy(ctx, client, host)
}

// ClientOptions returns the options that point a Google Cloud gRPC client
// (cloud.google.com/go/datastore, cloud.google.com/go/pubsub/v2) at an emulator on
// host without credentials or TLS — what the clients do themselves when
// DATASTORE_EMULATOR_HOST or PUBSUB_EMULATOR_HOST is set, without touching the
// process environment.
func ClientOptions(host string) []option.ClientOption {
	return []option.ClientOption{
		option.WithEndpoint("passthrough:///" + host),
		option.WithoutAuthentication(),
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())),
	}
}
