/*
 * clockshift: an LD_PRELOAD library that moves a process's wall clock by
 * CLOCKSHIFT_SECONDS (may be negative). It wraps gettimeofday, which Redis uses
 * for TIME and for key expiry (ustime/mstime), and clock_gettime for the
 * CLOCK_REALTIME clocks; monotonic clocks are left alone. Built and loaded only
 * by redisgate's clock test, to give a private redis-server a clock far from the
 * test process's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

static long long shift_seconds(void) {
	static int read;
	static long long shift;
	if (!read) {
		const char *s = getenv("CLOCKSHIFT_SECONDS");
		shift = s ? atoll(s) : 0;
		read = 1;
	}
	return shift;
}

int gettimeofday(struct timeval *tv, void *tz) {
	static int (*real)(struct timeval *, void *);
	if (!real)
		real = (int (*)(struct timeval *, void *))dlsym(RTLD_NEXT, "gettimeofday");
	int r = real(tv, tz);
	if (r == 0 && tv)
		tv->tv_sec += shift_seconds();
	return r;
}

int clock_gettime(clockid_t id, struct timespec *ts) {
	static int (*real)(clockid_t, struct timespec *);
	if (!real)
		real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
	int r = real(id, ts);
	if (r == 0 && ts && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE))
		ts->tv_sec += shift_seconds();
	return r;
}

time_t time(time_t *out) {
	struct timeval tv;
	gettimeofday(&tv, NULL);
	if (out)
		*out = tv.tv_sec;
	return tv.tv_sec;
}
