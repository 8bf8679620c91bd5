/* The documented thread safety: queries on one index from several threads at once give the
 * answers one thread gets, and each thread has its own last error message. */
#define _POSIX_C_SOURCE 200112L /* pthreads */
#include <pthread.h>
#include <string.h>

#include "common.h"

enum { N = 2000, QUERIES = 64, THREADS = 4, K = 4 };

static SpatixIndexF32 *grid;
static SpatixAabbF32 areas[QUERIES];
static size_t want_counts[QUERIES];
static SpatixNeighbor want_near[QUERIES][K];

static void *worker(void *arg) {
    static SpatixItem items[THREADS][N];
    size_t t = (size_t)arg, q, count, i;
    SpatixNeighbor near[K];
    int *bad = malloc(sizeof *bad);
    if (bad == NULL) return NULL;
    *bad = 0;
    for (q = 0; q < QUERIES; q++) {
        if (spatix_index_f32_query_fill(grid, &areas[q], items[t], N, &count) != SPATIX_STATUS_OK ||
            count != want_counts[q])
            (*bad)++;
        if (spatix_index_f32_nearest_fill(grid, areas[q].min_x, areas[q].min_y, K, near, K, &count) !=
                SPATIX_STATUS_OK ||
            count != K)
            (*bad)++;
        for (i = 0; i < K && i < count; i++)
            if (near[i].distance != want_near[q][i].distance) (*bad)++;
    }
    /* This thread's failure is its own message; the main thread's stays as it was. */
    if (spatix_index_f32_len(NULL, &count) != SPATIX_STATUS_NULL_POINTER ||
        strstr(spatix_last_error_message(), "null pointer") == NULL)
        (*bad)++;
    return bad;
}

int main(void) {
    SpatixAabbF32 world = {0, 0, 1000, 1000}, inverted = {2, 2, 1, 1};
    pthread_t threads[THREADS];
    uint64_t handle;
    size_t i, count;
    OK(spatix_loose_grid_f32_new(&world, 20, &grid));
    for (i = 0; i < N; i++) {
        float x = (float)next_in(0, 1000), y = (float)next_in(0, 1000);
        SpatixAabbF32 b = {x, y, x + (float)next_in(0, 10), y + (float)next_in(0, 10)};
        OK(spatix_index_f32_insert(grid, &b, i, &handle));
    }
    for (i = 0; i < QUERIES; i++) {
        float x = (float)next_in(0, 950), y = (float)next_in(0, 950);
        SpatixAabbF32 a = {x, y, x + 50, y + 50};
        areas[i] = a;
        {
            SpatixStatus s = spatix_index_f32_query_fill(grid, &a, NULL, 0, &want_counts[i]);
            CHECK(s == (want_counts[i] == 0 ? SPATIX_STATUS_OK : SPATIX_STATUS_BUFFER_TOO_SMALL));
        }
        OK(spatix_index_f32_nearest_fill(grid, x, y, K, want_near[i], K, &count));
    }
    EXPECT(spatix_index_f32_insert(grid, &inverted, 0, &handle), SPATIX_STATUS_INVALID_BOX);
    for (i = 0; i < THREADS; i++) CHECK(pthread_create(&threads[i], NULL, worker, (void *)i) == 0);
    for (i = 0; i < THREADS; i++) {
        void *bad = NULL;
        CHECK(pthread_join(threads[i], &bad) == 0);
        CHECK(bad != NULL && *(int *)bad == 0);
        free(bad);
    }
    CHECK(strstr(spatix_last_error_message(), "invalid box") != NULL);
    OK(spatix_index_f32_destroy(grid));
    if (failures != 0) {
        fprintf(stderr, "threads: %d checks failed\n", failures);
        return 1;
    }
    printf("threads: concurrent queries agree, and each thread keeps its own last error\n");
    return 0;
}
