package childproc

import "errors"

// ErrUnsupported is what Start returns on a system without Unix process
// groups (Windows): helper processes run on Linux and macOS only.
var ErrUnsupported = errors.New("starting helper processes is supported on Linux and macOS")
