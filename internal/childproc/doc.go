// Package childproc starts helper processes (test servers, Google's emulators) that
// must not outlive the process that started them.
//
// [Start] puts the child in its own process group, so signalling -pid reaches the
// child and anything it forks while a terminal's Ctrl-C reaches only the parent, and,
// on Linux, asks the kernel to SIGKILL the child when the parent dies (the
// parent-death signal, prctl(PR_SET_PDEATHSIG)), so no server survives a crashed or
// killed test binary or CLI.
//
// On systems without Unix process groups (Windows) Start refuses with
// [ErrUnsupported], so the packages that use it still build there.
package childproc
