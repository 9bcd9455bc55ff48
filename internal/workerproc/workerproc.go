// Package workerproc runs reference-worker processes for the demo and the
// end-to-end tests, so a crash is a real SIGKILL of a real process. Each process
// listens on its own loopback port (PORT), logs JSON lines to stderr, and
// answers GET /healthz when ready. Processes start through internal/childproc,
// so on Windows Start fails with childproc.ErrUnsupported; Pause and Resume
// (SIGSTOP, SIGCONT) exist on Unix only.
package workerproc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/oncegate/oncegate/internal/childproc"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Proc is one worker process that can be killed and restarted on the same port.
type Proc struct {
	argv   []string
	env    []string
	port   int
	onLine func(map[string]any)

	mu       sync.Mutex
	cmd      *exec.Cmd
	done     chan struct{}
	stopping bool     // Kill or Stop was asked: an exit is expected
	exited   bool     // the process exited on its own
	tail     []string // the last non-JSON stderr lines (panics, race reports)
}

// tailLines is how many non-JSON stderr lines a Proc keeps.
const tailLines = 50

// FreePort returns a free loopback TCP port.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Start starts argv with env (plus PORT) and waits until /healthz answers.
// onLine, when set, receives every JSON log line the process writes to stderr
// (other lines are ignored); it may be called from several goroutines.
func Start(ctx context.Context, argv, env []string, onLine func(map[string]any)) (*Proc, error) {
	if len(argv) == 0 {
		return nil, errors.New("workerproc: empty command")
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	p := &Proc{argv: argv, env: env, port: port, onLine: onLine}
	return p, p.start(ctx)
}

// URL is the worker's base URL.
func (p *Proc) URL() string { return "http://127.0.0.1:" + strconv.Itoa(p.port) }

func (p *Proc) start(ctx context.Context) error {
	cmd := exec.Command(p.argv[0], p.argv[1:]...)
	cmd.Env = append(append(os.Environ(), p.env...), "PORT="+strconv.Itoa(p.port))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	// A worker must not outlive its parent (a test binary ended by -timeout, a
	// demo killed): childproc gives it SIGKILL as its parent-death signal.
	if err := childproc.Start(cmd, nil); err != nil {
		return fmt.Errorf("workerproc: start %s: %w", p.argv[0], err)
	}
	done := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		for sc.Scan() {
			var line map[string]any
			if json.Unmarshal(sc.Bytes(), &line) == nil {
				if p.onLine != nil {
					p.onLine(line)
				}
				continue
			}
			p.mu.Lock()
			p.tail = append(p.tail, sc.Text())
			if len(p.tail) > tailLines {
				p.tail = p.tail[len(p.tail)-tailLines:]
			}
			p.mu.Unlock()
		}
		_ = cmd.Wait()
		p.mu.Lock()
		if !p.stopping {
			p.exited = true
		}
		p.mu.Unlock()
		close(done)
	}()
	p.mu.Lock()
	p.cmd, p.done, p.stopping = cmd, done, false
	p.mu.Unlock()
	return p.waitReady(ctx, done)
}

func (p *Proc) waitReady(ctx context.Context, done chan struct{}) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			_, tail := p.Exited()
			return fmt.Errorf("workerproc: %s exited before it was ready: %s", p.argv[0], strings.Join(tail, "\n"))
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		resp, err := http.Get(p.URL() + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("workerproc: %s not ready on port %d after 30s", p.argv[0], p.port)
}

// Kill sends SIGKILL and waits for the process to exit.
func (p *Proc) Kill() { p.signal(syscall.SIGKILL) }

// Stop sends SIGTERM (a graceful shutdown) and waits for the process to exit.
func (p *Proc) Stop() { p.signal(syscall.SIGTERM) }

func (p *Proc) send(sig syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil && p.cmd.Process != nil {
		_ = p.cmd.Process.Signal(sig)
	}
}

// Exited reports whether the process exited without being killed or stopped
// (a crash), and the last lines it wrote to stderr that were not JSON.
func (p *Proc) Exited() (bool, []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exited, append([]string(nil), p.tail...)
}

func (p *Proc) signal(sig syscall.Signal) {
	p.mu.Lock()
	p.stopping = true
	p.mu.Unlock()
	p.send(sig)
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	if done != nil {
		<-done
	}
}

// Restart starts the process again on the same port (after Kill or Stop).
func (p *Proc) Restart(ctx context.Context) error { return p.start(ctx) }
