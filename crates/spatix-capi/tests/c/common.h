/* Shared by the C tests: a seeded generator, checks that report where they failed, and
 * sorting of value lists. */
#ifndef SPATIX_TEST_COMMON_H
#define SPATIX_TEST_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "spatix.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15u;

/* xorshift64*: the next pseudo-random 64 bits. */
static inline uint64_t next_u64(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Du;
}

/* Uniform in [0, 1). */
static inline double next_unit(void) { return (double)(next_u64() >> 11) / 9007199254740992.0; }

/* Uniform in [lo, hi). */
static inline double next_in(double lo, double hi) { return lo + (hi - lo) * next_unit(); }

static int failures = 0;

/* Records a failure with its place unless `cond` holds. */
#define CHECK(cond)                                                                        \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);       \
            failures++;                                                                    \
        }                                                                                  \
    } while (0)

/* Checks that a call answered `want`, printing the library's message when not. */
#define EXPECT(call, want)                                                                 \
    do {                                                                                   \
        SpatixStatus got_ = (call);                                                        \
        if (got_ != (want)) {                                                              \
            fprintf(stderr, "%s:%d: %s gave %s (%s), wanted %s\n", __FILE__, __LINE__,     \
                    #call, spatix_status_name(got_), spatix_last_error_message(),          \
                    spatix_status_name(want));                                             \
            failures++;                                                                    \
        }                                                                                  \
    } while (0)

#define OK(call) EXPECT(call, SPATIX_STATUS_OK)

static inline int compare_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Sorts `n` values in place. */
static inline void sort_u64(uint64_t *v, size_t n) { qsort(v, n, sizeof *v, compare_u64); }

/* Whether two sorted lists are equal. */
static inline int same_u64(const uint64_t *a, size_t na, const uint64_t *b, size_t nb) {
    size_t i;
    if (na != nb) return 0;
    for (i = 0; i < na; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

/* Whether the structure is built once (no insert, remove or update). */
static inline int is_static(int32_t kind) {
    return kind == SPATIX_KIND_PACKED_INDEX || kind == SPATIX_KIND_KD_TREE;
}

/* Whether the structure has the parallel pair pass (and, a dynamic one, par_update_all). */
static inline int has_parallel_pairs(int32_t kind) {
    return kind != SPATIX_KIND_KD_TREE;
}

#endif
