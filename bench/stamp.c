/* The command of the sleep-accuracy benchmark: appends "start NS" when it
 * starts and "end NS" just before it exits (CLOCK_MONOTONIC), then fails,
 * so retry sleeps and runs it again. C, not sh: a shell's own start-up
 * would swamp the sub-millisecond figure being measured. */
#include <stdio.h>
#include <time.h>

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv) {
    long long start = now_ns();
    if (argc < 2) return 2;
    FILE *log = fopen(argv[1], "a");
    if (!log) return 2;
    fprintf(log, "start %lld\n", start);
    fflush(log);
    fprintf(log, "end %lld\n", now_ns());
    fclose(log);
    return 1;
}
