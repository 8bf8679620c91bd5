/* The C port of spatix's conformance idea: random operations on every structure of both
 * precisions, every query form checked against a brute-force loop (conformance_impl.h). */
#include <math.h>
#include <string.h>

#include "common.h"

#define REAL float
#define AABB SpatixAabbF32
#define POINT SpatixPointF32
#define RAY SpatixRayF32
#define INDEX SpatixIndexF32
#define IDX(op) spatix_index_f32_##op
#define NEW(structure, op) spatix_##structure##_f32_##op
#define L(name) name##_f32
#include "conformance_impl.h"
#undef REAL
#undef AABB
#undef POINT
#undef RAY
#undef INDEX
#undef IDX
#undef NEW
#undef L

#define REAL double
#define AABB SpatixAabbF64
#define POINT SpatixPointF64
#define RAY SpatixRayF64
#define INDEX SpatixIndexF64
#define IDX(op) spatix_index_f64_##op
#define NEW(structure, op) spatix_##structure##_f64_##op
#define L(name) name##_f64
#include "conformance_impl.h"

int main(void) {
    check_all_f32();
    check_all_f64();
    if (failures != 0) {
        fprintf(stderr, "conformance: %d checks failed\n", failures);
        return 1;
    }
    printf("conformance: every structure of both precisions agrees with brute force\n");
    return 0;
}
