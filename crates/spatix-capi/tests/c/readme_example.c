/* The README's "From C and C++" example, compiled and run by the C tests. */
#include <stdio.h>
#include "spatix.h"

static int32_t touch(void *context, SpatixItem a, SpatixItem b) {
    (void)context;
    printf("agents %llu and %llu touch\n", (unsigned long long)a.value, (unsigned long long)b.value);
    return 0; /* 0: go on */
}

int main(void) {
    SpatixAabbF32 world = {0, 0, 1000, 1000}, orc = {10, 10, 14, 14}, elf = {13, 13, 17, 17};
    SpatixIndexF32 *grid = NULL;
    uint64_t a, b;
    if (spatix_uniform_grid_f32_new(&world, 16, &grid) || spatix_index_f32_insert(grid, &orc, 1, &a) ||
        spatix_index_f32_insert(grid, &elf, 2, &b) || spatix_index_f32_pairs(grid, touch, NULL)) {
        fprintf(stderr, "spatix: %s\n", spatix_last_error_message()); /* any status but 0 */
        return 1;
    }
    return spatix_index_f32_destroy(grid); /* SPATIX_STATUS_OK is 0 */
}
