/* The agents frame of spatix's `compare` ("frame-uniform") through the C ABI: N agents
 * (default 1,000,000) of half-size in [1, 3) moving at 0.5 to 2 per frame in a square world
 * of side 1000 * sqrt(N / 10,000), bouncing off its edges, generated exactly as
 * spatix_workload::Agents::new(N, Uniform, Uniform, 0x5EED) does; a SweepGrid of f32 built
 * in one go, then frames of: step every agent, move every element, all pairs.
 *
 * Two ways to move the elements, each timed (median over the frames after one warm-up):
 *   bulk:       the program steps its agents, then spatix_index_f32_update_many;
 *   update_all: spatix_index_f32_update_all, whose callback steps each agent.
 * `cargo run --release -p spatix-capi --example frame` runs the same frames through the Rust
 * API for the reference figure.
 *
 * Usage: frame [N] [FRAMES]   (build: see the README's "From C and C++") */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "spatix.h"

#define SEED 0x5EEDu

typedef struct {
    size_t n;
    float *x, *y, *vx, *vy, *hx, *hy;
    float lo, hi; /* the arena (the world): [lo, hi] on both axes */
    SpatixAabbF32 *boxes;
    uint64_t *handles;
} Agents;

static uint64_t rng;

/* spatix_workload::Rng: splitmix64. */
static uint64_t next_u64(void) {
    uint64_t z = (rng += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

static double range(double lo, double hi) {
    return lo + (hi - lo) * ((double)(next_u64() >> 11) * (1.0 / 9007199254740992.0));
}

static void make_agents(Agents *a, size_t n) {
    size_t i, clusters = n / 2000 < 1 ? 1 : (n / 2000 > 64 ? 64 : n / 2000);
    double side = 1000.0 * sqrt((double)n / 10000.0), hi;
    if (side < 10.0) side = 10.0;
    hi = (double)(float)side; /* the arena's edge, as the f32 world has it */
    rng = SEED;
    for (i = 0; i < 2 * clusters; i++) next_u64(); /* the cluster centres Agents::new draws */
    a->n = n;
    a->lo = 0.0f;
    a->hi = (float)side;
    a->x = malloc(n * sizeof(float));
    a->y = malloc(n * sizeof(float));
    a->vx = malloc(n * sizeof(float));
    a->vy = malloc(n * sizeof(float));
    a->hx = malloc(n * sizeof(float));
    a->hy = malloc(n * sizeof(float));
    a->boxes = malloc(n * sizeof(SpatixAabbF32));
    a->handles = malloc(n * sizeof(uint64_t));
    if (!a->x || !a->y || !a->vx || !a->vy || !a->hx || !a->hy || !a->boxes || !a->handles) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    for (i = 0; i < n; i++) {
        double hx = range(1.0, 3.0), hy = range(1.0, 3.0);
        double x = range(0.0, hi), y = range(0.0, hi);
        double speed = range(0.5, 2.0), angle = range(0.0, 6.283185307179586);
        a->hx[i] = (float)hx;
        a->hy[i] = (float)hy;
        a->x[i] = (float)x;
        a->y[i] = (float)y;
        a->vx[i] = (float)(speed * cos(angle));
        a->vy[i] = (float)(speed * sin(angle));
    }
}

static void free_agents(Agents *a) {
    free(a->x);
    free(a->y);
    free(a->vx);
    free(a->vy);
    free(a->hx);
    free(a->hy);
    free(a->boxes);
    free(a->handles);
}

/* spatix_workload's step: move, and turn back from an edge crossed outwards. */
static void step(Agents *a, size_t i) {
    float x = a->x[i] + a->vx[i], y = a->y[i] + a->vy[i];
    a->x[i] = x;
    a->y[i] = y;
    if ((x < a->lo && a->vx[i] < 0.0f) || (x > a->hi && a->vx[i] > 0.0f)) a->vx[i] = -a->vx[i];
    if ((y < a->lo && a->vy[i] < 0.0f) || (y > a->hi && a->vy[i] > 0.0f)) a->vy[i] = -a->vy[i];
}

static SpatixAabbF32 box_of(const Agents *a, size_t i) {
    SpatixAabbF32 b;
    b.min_x = a->x[i] - a->hx[i];
    b.min_y = a->y[i] - a->hy[i];
    b.max_x = a->x[i] + a->hx[i];
    b.max_y = a->y[i] + a->hy[i];
    return b;
}

/* update_all's callback: the element's value is its agent's number. */
static void mover(void *context, uint64_t handle, uint64_t *value, const SpatixAabbF32 *old_box,
                  SpatixAabbF32 *new_box) {
    Agents *a = context;
    (void)handle;
    (void)old_box;
    step(a, (size_t)*value);
    *new_box = box_of(a, (size_t)*value);
}

typedef struct {
    uint64_t count, ids;
} Tally;

static int32_t tally(void *context, SpatixItem a, SpatixItem b) {
    Tally *t = context;
    t->count++;
    t->ids += a.value ^ b.value;
    return 0;
}

static int32_t record_handle(void *context, SpatixItem item) {
    ((Agents *)context)->handles[item.value] = item.handle;
    return 0;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define CALL(call)                                                                         \
    do {                                                                                   \
        SpatixStatus s_ = (call);                                                          \
        if (s_ != SPATIX_STATUS_OK) {                                                      \
            fprintf(stderr, "%s: %s\n", #call, spatix_last_error_message());               \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

/* Runs `frames` + 1 frames of one mode; prints the median frame and the last frame's pairs. */
static void run(size_t n, int frames, int bulk) {
    Agents a;
    SpatixIndexF32 *grid = NULL;
    SpatixAabbF32 world;
    uint64_t *values = malloc(n * sizeof(uint64_t));
    double *times = malloc((size_t)(frames + 1) * sizeof(double));
    Tally t = {0, 0};
    size_t i;
    int f;
    if (!values || !times) exit(1);
    make_agents(&a, n);
    for (i = 0; i < n; i++) {
        a.boxes[i] = box_of(&a, i);
        values[i] = i;
    }
    world.min_x = world.min_y = a.lo;
    world.max_x = world.max_y = a.hi;
    CALL(spatix_sweep_grid_f32_build(&world, a.boxes, values, n, &grid));
    CALL(spatix_index_f32_query(grid, &world, record_handle, &a));
    for (f = 0; f <= frames; f++) {
        double start = now();
        if (bulk) {
            for (i = 0; i < n; i++) {
                step(&a, i);
                a.boxes[i] = box_of(&a, i);
            }
            CALL(spatix_index_f32_update_many(grid, a.handles, a.boxes, n));
        } else {
            CALL(spatix_index_f32_update_all(grid, mover, &a));
            CALL(spatix_index_f32_maintain(grid));
        }
        t.count = t.ids = 0;
        CALL(spatix_index_f32_pairs(grid, tally, &t));
        times[f] = now() - start;
    }
    qsort(times + 1, (size_t)frames, sizeof(double), compare_double);
    printf("C    SweepGrid f32 %-10s N=%zu frames=%d median frame %.2f ms, pairs %llu\n",
           bulk ? "bulk" : "update_all", n, frames, times[1 + frames / 2] * 1e3,
           (unsigned long long)t.count);
    CALL(spatix_index_f32_destroy(grid));
    free_agents(&a);
    free(values);
    free(times);
}

int main(int argc, char **argv) {
    size_t n = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 1000000;
    int frames = argc > 2 ? atoi(argv[2]) : 10;
    if (n == 0 || frames < 1) {
        fprintf(stderr, "usage: frame [N >= 1] [FRAMES >= 1]\n");
        return 2;
    }
    run(n, frames, 1);
    run(n, frames, 0);
    return 0;
}
