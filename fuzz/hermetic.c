/* The randomness and the clocks of a CI fuzz run (`run.sh --ci`, which loads this with
 * LD_PRELOAD): fixed streams instead of the kernel's, so that a run depends on its fuzzer seed
 * alone.
 *
 * libFuzzer chooses what to mutate next by the coverage of what it ran, and mutates with values
 * the target compared. The targets draw on the system without asking: std seeds every HashMap
 * from getrandom (a different seed takes other probes through the same table), uuids are random,
 * and a card's Last-Modified is compared with a request's If-Modified-Since. With the kernel's
 * values, two runs from one fuzzer seed part ways after a few hundred inputs. */
#include <stddef.h>
#include <sys/time.h>
#include <sys/types.h>
#include <time.h>

static unsigned long long random_state = 0x2545f4914f6cdd1dULL;

/* splitmix64: each call gets new bytes, so that ids drawn one after another still differ. */
static unsigned long long next_random(void) {
  unsigned long long z = __atomic_add_fetch(&random_state, 0x9e3779b97f4a7c15ULL, __ATOMIC_RELAXED);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

ssize_t getrandom(void *buf, size_t len, unsigned int flags) {
  (void)flags;
  unsigned char *out = buf;
  for (size_t i = 0; i < len; i += 8) {
    unsigned long long word = next_random();
    for (size_t j = 0; j < 8 && i + j < len; j++) out[i + j] = (unsigned char)(word >> (8 * j));
  }
  return (ssize_t)len;
}

/* Every reading of any clock is 1 µs after the thread's one before, from 2026-01-01T00:00:00Z:
 * a thread's readings do not depend on when another thread reads. (libFuzzer's own reads in its
 * timeout alarm would; `run.sh --ci` turns the alarm off and bounds the run from outside.) */
static __thread unsigned long long clock_ns;

int clock_gettime(clockid_t clock, struct timespec *at) {
  (void)clock;
  unsigned long long ns = clock_ns += 1000ULL;
  at->tv_sec = 1767225600LL + (long long)(ns / 1000000000ULL);
  at->tv_nsec = (long)(ns % 1000000000ULL);
  return 0;
}

int gettimeofday(struct timeval *at, void *zone) {
  (void)zone;
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  at->tv_sec = now.tv_sec;
  at->tv_usec = now.tv_nsec / 1000;
  return 0;
}

time_t time(time_t *out) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  if (out) *out = now.tv_sec;
  return now.tv_sec;
}
