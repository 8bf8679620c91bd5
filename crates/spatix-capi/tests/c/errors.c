/* Every error path of the ABI: each status a call can answer, and the message with it. */
#include <math.h>
#include <string.h>

#include "common.h"

static int32_t count_items(void *context, SpatixItem item) {
    (void)item;
    ++*(size_t *)context;
    return 0;
}

static int32_t count_pairs(void *context, SpatixItem a, SpatixItem b) {
    (void)a;
    (void)b;
    ++*(size_t *)context;
    return 0;
}

static void nan_mover(void *context, uint64_t handle, uint64_t *value, const SpatixAabbF32 *old_box,
                      SpatixAabbF32 *new_box) {
    (void)context;
    (void)handle;
    (void)value;
    (void)old_box;
    new_box->min_x = NAN;
}

int main(void) {
    SpatixAabbF32 world = {0, 0, 100, 100};
    SpatixAabbF32 got, good = {1, 1, 2, 2}, inverted = {5, 5, 4, 4}, with_nan = {NAN, 0, 1, 1};
    SpatixIndexF32 *grid = NULL, *packed = NULL, *tree = NULL, *loaded = NULL;
    SpatixIndexF64 *grid64 = NULL;
    SpatixAabbF64 world64 = {0, 0, 100, 100};
    SpatixPointF32 point = {3, 3};
    SpatixRayF32 zero_ray = {0, 0, 0, 0, 10};
    SpatixItem items[4];
    uint64_t handle = 0, value = 7, stale;
    uint8_t bytes[4096], garbage[64];
    size_t count = 0, len = 0;
    uint64_t foreign[8] = {0};

    CHECK(spatix_abi_version() == SPATIX_ABI_VERSION);
    CHECK(strcmp(spatix_status_name(SPATIX_STATUS_STALE_HANDLE), "SPATIX_STATUS_STALE_HANDLE") == 0);
    CHECK(strcmp(spatix_status_name(99), "SPATIX_STATUS_UNKNOWN") == 0);

    /* Null pointers. */
    EXPECT(spatix_uniform_grid_f32_new(NULL, 10, &grid), SPATIX_STATUS_NULL_POINTER);
    CHECK(strstr(spatix_last_error_message(), "null pointer") != NULL);
    EXPECT(spatix_uniform_grid_f32_new(&world, 10, NULL), SPATIX_STATUS_NULL_POINTER);
    OK(spatix_uniform_grid_f32_new(&world, 10, &grid));
    EXPECT(spatix_index_f32_insert(NULL, &good, 1, &handle), SPATIX_STATUS_NULL_POINTER);
    EXPECT(spatix_index_f32_insert(grid, NULL, 1, &handle), SPATIX_STATUS_NULL_POINTER);
    EXPECT(spatix_index_f32_insert(grid, &good, 1, NULL), SPATIX_STATUS_NULL_POINTER);
    EXPECT(spatix_index_f32_len(grid, NULL), SPATIX_STATUS_NULL_POINTER);
    EXPECT(spatix_index_f32_query(grid, &good, NULL, NULL), SPATIX_STATUS_NULL_POINTER);
    EXPECT(spatix_index_f32_query_fill(grid, &good, NULL, 4, &count), SPATIX_STATUS_NULL_POINTER);
    EXPECT(spatix_index_f32_query_fill(grid, &good, items, 4, NULL), SPATIX_STATUS_NULL_POINTER);
    EXPECT(spatix_index_f32_update_many(grid, NULL, &good, 1), SPATIX_STATUS_NULL_POINTER);
    EXPECT(spatix_index_f32_load(NULL, 10, &loaded), SPATIX_STATUS_NULL_POINTER);
    OK(spatix_index_f32_destroy(NULL));

    /* Invalid boxes, points, rays and parameters. */
    EXPECT(spatix_index_f32_insert(grid, &inverted, 1, &handle), SPATIX_STATUS_INVALID_BOX);
    CHECK(strstr(spatix_last_error_message(), "invalid box") != NULL);
    EXPECT(spatix_index_f32_insert(grid, &with_nan, 1, &handle), SPATIX_STATUS_INVALID_BOX);
    EXPECT(spatix_index_f32_query(grid, &inverted, count_items, &count), SPATIX_STATUS_INVALID_BOX);
    EXPECT(spatix_index_f32_nearest_fill(grid, NAN, 0, 1, NULL, 0, &count), SPATIX_STATUS_INVALID_BOX);
    EXPECT(spatix_index_f32_within(grid, 1, 1, -1, count_items, &count), SPATIX_STATUS_INVALID_PARAMETER);
    EXPECT(spatix_index_f32_raycast_fill(grid, &zero_ray, NULL, 0, &count), SPATIX_STATUS_INVALID_PARAMETER);
    EXPECT(spatix_uniform_grid_f32_new(&world, 0, &loaded), SPATIX_STATUS_INVALID_PARAMETER);
    EXPECT(spatix_sweep_grid_f32_new(&inverted, 1, &loaded), SPATIX_STATUS_INVALID_BOX);
    EXPECT(spatix_grid_f32_auto(SPATIX_KIND_KD_TREE, &world, &good, 1, &loaded),
           SPATIX_STATUS_INVALID_PARAMETER);
    EXPECT(spatix_grid_f32_auto(SPATIX_KIND_UNIFORM_GRID, &world, &inverted, 1, &loaded),
           SPATIX_STATUS_INVALID_BOX);
    CHECK(strstr(spatix_last_error_message(), "sample 0") != NULL);
    CHECK(loaded == NULL);

    /* Stale handles. */
    OK(spatix_index_f32_insert(grid, &good, 42, &handle));
    OK(spatix_index_f32_remove(grid, handle, &value));
    CHECK(value == 42);
    stale = handle;
    EXPECT(spatix_index_f32_remove(grid, stale, NULL), SPATIX_STATUS_STALE_HANDLE);
    CHECK(strstr(spatix_last_error_message(), "stale handle") != NULL);
    EXPECT(spatix_index_f32_update(grid, stale, &good), SPATIX_STATUS_STALE_HANDLE);
    EXPECT(spatix_index_f32_get(grid, stale, NULL, NULL), SPATIX_STATUS_STALE_HANDLE);
    OK(spatix_index_f32_insert(grid, &good, 43, &handle));
    CHECK(handle != stale);
    EXPECT(spatix_index_f32_update_many(grid, &stale, &good, 1), SPATIX_STATUS_STALE_HANDLE);
    CHECK(strstr(spatix_last_error_message(), "element 0") != NULL);
    EXPECT(spatix_index_f32_update_all(grid, nan_mover, NULL), SPATIX_STATUS_INVALID_BOX);
    OK(spatix_index_f32_get(grid, handle, &got, &value));
    CHECK(value == 43 && got.min_x == 1);

    /* Buffers too small say how much they needed. */
    OK(spatix_index_f32_insert(grid, &good, 44, &handle));
    EXPECT(spatix_index_f32_query_fill(grid, &good, items, 1, &count), SPATIX_STATUS_BUFFER_TOO_SMALL);
    CHECK(count == 2 && (items[0].value == 43 || items[0].value == 44));
    CHECK(strstr(spatix_last_error_message(), "buffer too small") != NULL);
    EXPECT(spatix_index_f32_query_fill(grid, &good, NULL, 0, &count), SPATIX_STATUS_BUFFER_TOO_SMALL);
    CHECK(count == 2);
    EXPECT(spatix_index_f32_pairs_fill(grid, NULL, 0, &count), SPATIX_STATUS_BUFFER_TOO_SMALL);
    CHECK(count == 1);
    EXPECT(spatix_index_f32_save(grid, bytes, 4, &len), SPATIX_STATUS_BUFFER_TOO_SMALL);
    CHECK(len > 4 && len <= sizeof bytes);

    /* Corrupt bytes, and bytes of another precision. */
    OK(spatix_index_f32_save(grid, bytes, sizeof bytes, &len));
    memset(garbage, 0xAB, sizeof garbage);
    EXPECT(spatix_index_f32_load(garbage, sizeof garbage, &loaded), SPATIX_STATUS_CORRUPT_BYTES);
    CHECK(strstr(spatix_last_error_message(), "corrupt") != NULL);
    EXPECT(spatix_index_f32_load(bytes, len / 2, &loaded), SPATIX_STATUS_CORRUPT_BYTES);
    EXPECT(spatix_index_f64_load(bytes, len, &grid64), SPATIX_STATUS_CORRUPT_BYTES);
    OK(spatix_index_f32_load(bytes, len, &loaded));
    OK(spatix_index_f32_len(loaded, &count));
    CHECK(count == 2);
    OK(spatix_index_f32_destroy(loaded));

    /* Foreign pointers: memory that is no index, and an index of the other precision. */
    EXPECT(spatix_index_f32_len((const SpatixIndexF32 *)(void *)foreign, &count),
           SPATIX_STATUS_FOREIGN_POINTER);
    EXPECT(spatix_index_f32_destroy((SpatixIndexF32 *)(void *)foreign), SPATIX_STATUS_FOREIGN_POINTER);
    OK(spatix_uniform_grid_f64_new(&world64, 10, &grid64));
    EXPECT(spatix_index_f32_insert((SpatixIndexF32 *)(void *)grid64, &good, 1, &handle),
           SPATIX_STATUS_FOREIGN_POINTER);
    CHECK(strstr(spatix_last_error_message(), "foreign pointer") != NULL);
    OK(spatix_index_f64_destroy(grid64));

    /* Lengths no memory could hold are refused before the input is read. */
    EXPECT(spatix_packed_index_f32_build(&good, &value, SIZE_MAX / 20, &packed),
           SPATIX_STATUS_OUT_OF_MEMORY);
    CHECK(strstr(spatix_last_error_message(), "out of memory") != NULL);
    EXPECT(spatix_index_f32_query_batch(grid, &good, SIZE_MAX / 8, items, 4, &len, &count),
           SPATIX_STATUS_OUT_OF_MEMORY);
    CHECK(packed == NULL);

    /* What a structure does not do. */
    OK(spatix_packed_index_f32_build(&good, &value, 1, &packed));
    EXPECT(spatix_index_f32_insert(packed, &good, 1, &handle), SPATIX_STATUS_UNSUPPORTED);
    EXPECT(spatix_index_f32_update_all(packed, nan_mover, NULL), SPATIX_STATUS_UNSUPPORTED);
    CHECK(strstr(spatix_last_error_message(), "unsupported") != NULL);
    count = 0;
    OK(spatix_index_f32_par_pairs(packed, count_pairs, &count));
    CHECK(count == 0);
    OK(spatix_kd_tree_f32_build(&point, &value, 1, &tree));
    EXPECT(spatix_index_f32_par_pairs(tree, count_pairs, &count), SPATIX_STATUS_UNSUPPORTED);
    EXPECT(spatix_index_f32_remove(tree, 0, NULL), SPATIX_STATUS_UNSUPPORTED);
    EXPECT(spatix_kd_tree_f32_build(NULL, &value, 1, &tree), SPATIX_STATUS_NULL_POINTER);
    OK(spatix_index_f32_destroy(tree));
    OK(spatix_index_f32_destroy(packed));
    OK(spatix_index_f32_destroy(grid));

    if (failures != 0) {
        fprintf(stderr, "errors: %d checks failed\n", failures);
        return 1;
    }
    printf("errors: every error path answers its status and message\n");
    return 0;
}
