/*
 * A tiny MPI allreduce for the lab's Open MPI test
 * (provisioner/tests/it/lab_mpi.rs), built there with mpicc.
 *
 *   mpi_allreduce BYTES [MARK_SOCKET]
 *
 * Every rank reduces BYTES of f32 (MPI_SUM). One allreduce first sets up
 * the connections the algorithm uses (Open MPI's TCP transport connects on
 * the first message to a peer). Then rank 0 marks: it writes a line on the
 * Unix socket MARK_SOCKET (or $EFLOPS_LAB_MARK) and waits for the lab's
 * "go" (the lab reads every link's byte counters in between); all ranks
 * wait in a barrier, run one allreduce, wait in a barrier again, and rank
 * 0 marks again. Without a socket it runs unmarked. Every rank checks every
 * element of both results; rank 0 prints one JSON line.
 *
 * Exit codes: 0 right, 1 a wrong element or a failed mark, 2 bad use.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static int mark_fd = -1;

/* Writes `what` and a newline, then reads up to the lab's "go\n". */
static int mark(const char *what) {
    char line[64];
    size_t got = 0;
    if (mark_fd < 0) return 0;
    if (dprintf(mark_fd, "%s\n", what) < 0) return -1;
    while (got < sizeof line - 1) {
        ssize_t n = read(mark_fd, line + got, 1);
        if (n <= 0) return -1;
        if (line[got++] == '\n') break;
    }
    line[got] = '\0';
    return strcmp(line, "go\n") == 0 ? 0 : -1;
}

static int open_mark(const char *path) {
    struct sockaddr_un a;
    int fd;
    if (strlen(path) >= sizeof a.sun_path) return -1;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    strcpy(a.sun_path, path);
    fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Element i of rank r's input: whole numbers, so every sum is exact. */
static float input(int r, long i) { return (float)(r + 1 + (int)(i % 7)); }

static long check(const float *out, long count, int size) {
    long wrong = 0;
    for (long i = 0; i < count; i++) {
        float want = (float)(size * (size + 1) / 2 + size * (int)(i % 7));
        if (out[i] != want) wrong++;
    }
    return wrong;
}

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2 || atol(argv[1]) < 4 * size) {
        if (rank == 0) fprintf(stderr, "usage: mpi_allreduce BYTES [MARK_SOCKET] (BYTES at least 4 per rank)\n");
        MPI_Finalize();
        return 2;
    }
    long count = atol(argv[1]) / 4;
    const char *sock = argc > 2 ? argv[2] : getenv("EFLOPS_LAB_MARK");
    float *in = malloc(count * sizeof *in), *out = malloc(count * sizeof *out);
    if (in == NULL || out == NULL) {
        fprintf(stderr, "rank %d: out of memory for %ld elements\n", rank, count);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (long i = 0; i < count; i++) in[i] = input(rank, i);

    /* Warm-up: every connection of the algorithm set up. */
    MPI_Allreduce(in, out, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    long wrong = check(out, count, size);
    MPI_Barrier(MPI_COMM_WORLD);

    int failed = 0;
    if (rank == 0 && sock != NULL && sock[0] != '\0') {
        mark_fd = open_mark(sock);
        if (mark_fd < 0 || mark("start") != 0) {
            fprintf(stderr, "rank 0: cannot mark on %s\n", sock);
            failed = 1;
        }
    }
    struct timespec t0, t1;
    MPI_Barrier(MPI_COMM_WORLD);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    MPI_Allreduce(in, out, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (rank == 0 && mark_fd >= 0 && mark("end") != 0) {
        fprintf(stderr, "rank 0: cannot mark the end on %s\n", sock);
        failed = 1;
    }
    wrong += check(out, count, size);

    long all = 0;
    MPI_Reduce(&wrong, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        double us = (t1.tv_sec - t0.tv_sec) * 1e6 + (t1.tv_nsec - t0.tv_nsec) / 1e3;
        printf("{\"ranks\": %d, \"bytes\": %ld, \"time_us\": %.1f, \"wrong\": %ld, \"marked\": %s}\n",
               size, count * 4, us, all, mark_fd >= 0 ? "true" : "false");
        fflush(stdout);
        if (all != 0) failed = 1;
    }
    free(in);
    free(out);
    MPI_Finalize();
    return failed;
}
