/* The conformance check of one precision, included by conformance.c once per precision with
 * REAL (float or double), AABB, POINT, RAY, INDEX, IDX(op) (the `spatix_index_<p>_op`
 * functions), NEW(structure, op) (the `spatix_<structure>_<p>_<op>` functions) and
 * L(name) (this precision's copy of a local name) defined.
 *
 * Random inserts, removes and moves (one by one, in bulk, and with update_all) are applied
 * to an index and to a plain array; every query form is checked against a brute-force loop
 * over that array. Elements are named by their values, which are unique. */

#define MAXN 300

typedef struct {
    int alive;
    uint64_t handle;
    uint64_t value;
    AABB box;
} L(Slot);

static L(Slot) L(model)[MAXN];
static uint64_t L(next_value) = 1;

static AABB L(random_box)(void) {
    REAL x = (REAL)next_in(-50, 1050), y = (REAL)next_in(-50, 1050);
    REAL w = (REAL)next_in(0, 40), h = (REAL)next_in(0, 40);
    AABB b;
    b.min_x = x;
    b.min_y = y;
    b.max_x = x + w;
    b.max_y = y + h;
    return b;
}

static int L(intersects)(const AABB *a, const AABB *b) {
    return a->min_x <= b->max_x && b->min_x <= a->max_x && a->min_y <= b->max_y &&
           b->min_y <= a->max_y;
}

/* Distance from (x, y) to the box, in double. */
static double L(distance)(const AABB *b, double x, double y) {
    double dx = x < b->min_x ? b->min_x - x : (x > b->max_x ? x - b->max_x : 0.0);
    double dy = y < b->min_y ? b->min_y - y : (y > b->max_y ? y - b->max_y : 0.0);
    return sqrt(dx * dx + dy * dy);
}

/* Where the ray enters the box (negative if it misses). */
static double L(entry)(const RAY *r, const AABB *b) {
    double t0 = 0.0, t1 = (double)r->max_t;
    double lo, hi, tmp;
    lo = ((double)b->min_x - r->origin_x) / r->direction_x;
    hi = ((double)b->max_x - r->origin_x) / r->direction_x;
    if (lo > hi) { tmp = lo; lo = hi; hi = tmp; }
    if (lo > t0) t0 = lo;
    if (hi < t1) t1 = hi;
    lo = ((double)b->min_y - r->origin_y) / r->direction_y;
    hi = ((double)b->max_y - r->origin_y) / r->direction_y;
    if (lo > hi) { tmp = lo; lo = hi; hi = tmp; }
    if (lo > t0) t0 = lo;
    if (hi < t1) t1 = hi;
    return t0 <= t1 ? t0 : -1.0;
}

/* The values of the model's live elements for which `keep` holds, sorted. */
#define L_BRUTE(out, n, keep)                                                              \
    do {                                                                                   \
        size_t i_;                                                                         \
        n = 0;                                                                             \
        for (i_ = 0; i_ < MAXN; i_++) {                                                    \
            const L(Slot) *s = &L(model)[i_];                                              \
            if (s->alive && (keep)) out[n++] = s->value;                                   \
        }                                                                                  \
        sort_u64(out, n);                                                                  \
    } while (0)

typedef struct {
    uint64_t values[MAXN];
    size_t n;
    size_t stop_after;
} L(Seen);

static int32_t L(see)(void *context, SpatixItem item) {
    L(Seen) *seen = (L(Seen) *)context;
    seen->values[seen->n++] = item.value;
    return seen->stop_after != 0 && seen->n >= seen->stop_after;
}

/* The item buffer's values, sorted. */
static void L(values_of)(const SpatixItem *items, size_t n, uint64_t *out) {
    size_t i;
    for (i = 0; i < n; i++) out[i] = items[i].value;
    sort_u64(out, n);
}

typedef struct {
    uint64_t count;
    uint64_t sum;
} L(PairTally);

/* An order-free digest of a pair of values. */
static uint64_t L(pair_digest)(uint64_t a, uint64_t b) {
    uint64_t lo = a < b ? a : b, hi = a < b ? b : a;
    return lo * 1000003u + hi * 7919u + (lo ^ (hi << 17));
}

static int32_t L(tally)(void *context, SpatixItem a, SpatixItem b) {
    L(PairTally) *t = (L(PairTally) *)context;
    t->count++;
    t->sum += L(pair_digest)(a.value, b.value);
    return 0;
}

/* A ray from (x, y) in a random direction, of random reach. */
static RAY L(random_ray)(REAL x, REAL y) {
    RAY ray;
    ray.origin_x = x;
    ray.origin_y = y;
    ray.direction_x = (REAL)next_in(-1, 1);
    ray.direction_y = (REAL)next_in(-1, 1);
    if (ray.direction_x == 0) ray.direction_x = (REAL)0.5;
    if (ray.direction_y == 0) ray.direction_y = (REAL)0.5;
    ray.max_t = (REAL)next_in(0, 600);
    return ray;
}

/* The batch forms against the single queries (which are checked against brute force). */
static void L(check_batches)(const INDEX *index) {
    enum { B = 8, K = 3 };
    static SpatixItem single[MAXN], batch[MAXN * B];
    static SpatixNeighbor near1[K], nearb[K * B];
    static SpatixHit hits1[MAXN], hitsb[B];
    uint64_t a[MAXN], b[MAXN];
    AABB areas[B];
    POINT points[B];
    RAY rays[B];
    size_t offsets[B + 1], total, n1, q, i;
    for (q = 0; q < B; q++) {
        areas[q] = L(random_box)();
        areas[q].max_x += 100;
        areas[q].max_y += 100;
        points[q].x = (REAL)next_in(0, 1000);
        points[q].y = (REAL)next_in(0, 1000);
        rays[q] = L(random_ray)(points[q].x, points[q].y);
    }
    OK(IDX(query_batch)(index, areas, B, batch, MAXN * B, offsets, &total));
    CHECK(offsets[0] == 0 && offsets[B] == total);
    for (q = 0; q < B; q++) {
        OK(IDX(query_fill)(index, &areas[q], single, MAXN, &n1));
        L(values_of)(single, n1, a);
        L(values_of)(batch + offsets[q], offsets[q + 1] - offsets[q], b);
        CHECK(same_u64(a, n1, b, offsets[q + 1] - offsets[q]));
    }
    offsets[B] = 0;
    /* No room: too small unless there is nothing to write. */
    EXPECT(IDX(query_batch)(index, areas, B, NULL, 0, offsets, &n1),
           total > 0 ? SPATIX_STATUS_BUFFER_TOO_SMALL : SPATIX_STATUS_OK);
    CHECK(n1 == total && offsets[B] == total);

    OK(IDX(within_batch)(index, points, B, 30, batch, MAXN * B, offsets, &total));
    for (q = 0; q < B; q++) {
        OK(IDX(within_fill)(index, points[q].x, points[q].y, 30, single, MAXN, &n1));
        L(values_of)(single, n1, a);
        L(values_of)(batch + offsets[q], offsets[q + 1] - offsets[q], b);
        CHECK(same_u64(a, n1, b, offsets[q + 1] - offsets[q]));
    }

    OK(IDX(nearest_batch)(index, points, B, K, nearb, K * B, offsets, &total));
    for (q = 0; q < B; q++) {
        OK(IDX(nearest_fill)(index, points[q].x, points[q].y, K, near1, K, &n1));
        CHECK(offsets[q + 1] - offsets[q] == n1);
        for (i = 0; i < n1 && i < offsets[q + 1] - offsets[q]; i++)
            CHECK(nearb[offsets[q] + i].distance == near1[i].distance);
    }

    OK(IDX(raycast_batch)(index, rays, B, hitsb, B, offsets, &total));
    for (q = 0; q < B; q++) {
        OK(IDX(raycast_fill)(index, &rays[q], hits1, MAXN, &n1));
        CHECK(offsets[q + 1] - offsets[q] == (n1 > 0 ? 1u : 0u));
        if (n1 > 0 && offsets[q + 1] > offsets[q]) CHECK(hitsb[offsets[q]].t == hits1[0].t);
    }
}

/* `tally` for the parallel pair pass: called on several threads at once. */
static int32_t L(tally_shared)(void *context, SpatixItem a, SpatixItem b) {
    L(PairTally) *t = (L(PairTally) *)context;
    __atomic_fetch_add(&t->count, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&t->sum, L(pair_digest)(a.value, b.value), __ATOMIC_RELAXED);
    return 0;
}

/* Every query form of `index` against the model (`dynamic`: the model is all it holds). */
static void L(check_queries)(const INDEX *index) {
    static SpatixItem items[MAXN];
    static SpatixPair pairs[MAXN * MAXN / 2];
    static SpatixNeighbor near[8];
    static SpatixHit hits[MAXN];
    uint64_t want[MAXN], got[MAXN];
    size_t nwant, ngot, count, i, j, live = 0;
    int q;
    L(Seen) seen;
    L(PairTally) tally = {0, 0}, brute = {0, 0};

    for (i = 0; i < MAXN; i++) live += L(model)[i].alive;
    OK(IDX(len)(index, &count));
    CHECK(count == live);

    for (q = 0; q < 8; q++) {
        AABB area = L(random_box)();
        REAL x = (REAL)next_in(0, 1000), y = (REAL)next_in(0, 1000), r = (REAL)next_in(0, 80);
        RAY ray;
        size_t k = (size_t)(next_u64() % 6);
        double last;

        area.max_x += 100;
        area.max_y += 100;
        L_BRUTE(want, nwant, L(intersects)(&s->box, &area));
        OK(IDX(query_fill)(index, &area, items, MAXN, &ngot));
        L(values_of)(items, ngot, got);
        CHECK(same_u64(want, nwant, got, ngot));
        seen.n = 0;
        seen.stop_after = 0;
        OK(IDX(query)(index, &area, L(see), &seen));
        sort_u64(seen.values, seen.n);
        CHECK(same_u64(want, nwant, seen.values, seen.n));
        if (nwant > 1) {
            /* A visitor that stops is not called again; a short buffer says what it needs. */
            seen.n = 0;
            seen.stop_after = 1;
            OK(IDX(query)(index, &area, L(see), &seen));
            CHECK(seen.n == 1);
            EXPECT(IDX(query_fill)(index, &area, items, 1, &ngot), SPATIX_STATUS_BUFFER_TOO_SMALL);
            CHECK(ngot == nwant);
        }

        L_BRUTE(want, nwant, L(distance)(&s->box, x, y) <= r);
        OK(IDX(within_fill)(index, x, y, r, items, MAXN, &ngot));
        L(values_of)(items, ngot, got);
        CHECK(same_u64(want, nwant, got, ngot));
        seen.n = 0;
        seen.stop_after = 0;
        OK(IDX(within)(index, x, y, r, L(see), &seen));
        sort_u64(seen.values, seen.n);
        CHECK(same_u64(want, nwant, seen.values, seen.n));

        /* k nearest: as many as there are (up to k), nearest first, and none left out that
         * is nearer than the farthest found. */
        OK(IDX(nearest_fill)(index, x, y, k, near, 8, &ngot));
        CHECK(ngot == (k < live ? k : live));
        last = 0.0;
        for (i = 0; i < ngot; i++) {
            AABB b;
            uint64_t v;
            CHECK(near[i].distance >= last);
            last = near[i].distance;
            OK(IDX(get)(index, near[i].item.handle, &b, &v));
            CHECK(v == near[i].item.value);
            CHECK(fabs(L(distance)(&b, x, y) - near[i].distance) <= 1e-3);
        }
        if (ngot > 0) {
            L_BRUTE(want, nwant, L(distance)(&s->box, x, y) < last - 1e-3);
            CHECK(nwant < ngot);
        }

        ray = L(random_ray)(x, y);
        L_BRUTE(want, nwant, L(entry)(&ray, &s->box) >= 0.0);
        OK(IDX(raycast_fill)(index, &ray, hits, MAXN, &ngot));
        for (i = 0; i < ngot; i++) got[i] = hits[i].item.value;
        for (i = 1; i < ngot; i++) CHECK(hits[i].t >= hits[i - 1].t);
        sort_u64(got, ngot);
        CHECK(same_u64(want, nwant, got, ngot));
    }

    for (i = 0; i < MAXN; i++)
        for (j = i + 1; j < MAXN; j++) {
            const L(Slot) *a = &L(model)[i], *b = &L(model)[j];
            if (a->alive && b->alive && L(intersects)(&a->box, &b->box)) {
                brute.count++;
                brute.sum += L(pair_digest)(a->value, b->value);
            }
        }
    OK(IDX(pairs)(index, L(tally), &tally));
    CHECK(tally.count == brute.count && tally.sum == brute.sum);
    L(check_batches)(index);
    tally.count = tally.sum = 0;
    {
        SpatixKind kind;
        OK(IDX(kind)(index, &kind));
        if (has_parallel_pairs(kind)) {
            OK(IDX(par_pairs)(index, L(tally_shared), &tally));
            CHECK(tally.count == brute.count && tally.sum == brute.sum);
            OK(IDX(par_pairs_fill)(index, pairs, sizeof pairs / sizeof pairs[0], &count));
            CHECK(count == brute.count);
            tally.count = tally.sum = 0;
            for (i = 0; i < count; i++) L(tally)(&tally, pairs[i].a, pairs[i].b);
            CHECK(tally.sum == brute.sum);
        } else {
            EXPECT(IDX(par_pairs_fill)(index, pairs, 1, &count), SPATIX_STATUS_UNSUPPORTED);
            EXPECT(IDX(par_pairs)(index, L(tally_shared), &tally), SPATIX_STATUS_UNSUPPORTED);
        }
    }
    OK(IDX(pairs_fill)(index, pairs, sizeof pairs / sizeof pairs[0], &count));
    CHECK(count == brute.count);
    tally.count = tally.sum = 0;
    for (i = 0; i < count; i++) L(tally)(&tally, pairs[i].a, pairs[i].b);
    CHECK(tally.sum == brute.sum);
}

/* The model's slot of a live element chosen at random, or -1. */
static int L(random_live)(void) {
    int tries;
    for (tries = 0; tries < 64; tries++) {
        int i = (int)(next_u64() % MAXN);
        if (L(model)[i].alive) return i;
    }
    return -1;
}

/* The move that update_all applies, also applied to the model: a shift by the value. */
static void L(shift)(uint64_t value, const AABB *old, AABB *moved) {
    REAL dx = (REAL)((int)(value % 7) - 3), dy = (REAL)((int)(value % 5) - 2);
    moved->min_x = old->min_x + dx;
    moved->max_x = old->max_x + dx;
    moved->min_y = old->min_y + dy;
    moved->max_y = old->max_y + dy;
}

static void L(mover)(void *context, uint64_t handle, uint64_t *value, const AABB *old_box,
                     AABB *new_box) {
    (void)handle;
    __atomic_fetch_add((size_t *)context, 1, __ATOMIC_RELAXED);
    L(shift)(*value, old_box, new_box);
}

/* Saves `index`, loads it back, and checks the copy answers as the model says. */
static void L(check_round_trip)(const INDEX *index, SpatixKind want_kind) {
    size_t len = 0;
    uint8_t *bytes;
    INDEX *copy = NULL;
    SpatixKind kind;
    EXPECT(IDX(save)(index, NULL, 0, &len), SPATIX_STATUS_BUFFER_TOO_SMALL);
    bytes = (uint8_t *)malloc(len);
    CHECK(bytes != NULL);
    OK(IDX(save)(index, bytes, len, &len));
    OK(IDX(load)(bytes, len, &copy));
    OK(IDX(kind)(copy, &kind));
    CHECK(kind == want_kind);
    L(check_queries)(copy);
    EXPECT(IDX(load)(bytes, len - 1, &copy), SPATIX_STATUS_CORRUPT_BYTES);
    OK(IDX(destroy)(copy));
    free(bytes);
}

/* Random operations on one dynamic structure, checked as they go. */
static void L(check_dynamic)(INDEX *index, SpatixKind want_kind) {
    int step, i;
    SpatixKind kind;
    memset(L(model), 0, sizeof L(model));
    OK(IDX(kind)(index, &kind));
    CHECK(kind == want_kind);
    for (step = 0; step < 1500; step++) {
        unsigned op = (unsigned)(next_u64() % 100);
        if (op < 45) {
            for (i = 0; i < MAXN && L(model)[i].alive; i++) continue;
            if (i < MAXN) {
                L(Slot) *s = &L(model)[i];
                s->box = L(random_box)();
                s->value = L(next_value)++;
                OK(IDX(insert)(index, &s->box, s->value, &s->handle));
                s->alive = 1;
            }
        } else if (op < 65) {
            int at = L(random_live)();
            if (at >= 0) {
                uint64_t value = 0;
                L(Slot) *s = &L(model)[at];
                OK(IDX(remove)(index, s->handle, &value));
                CHECK(value == s->value);
                s->alive = 0;
                EXPECT(IDX(remove)(index, s->handle, &value), SPATIX_STATUS_STALE_HANDLE);
                EXPECT(IDX(update)(index, s->handle, &s->box), SPATIX_STATUS_STALE_HANDLE);
            }
        } else if (op < 95) {
            int at = L(random_live)();
            if (at >= 0) {
                L(Slot) *s = &L(model)[at];
                s->box = L(random_box)();
                OK(IDX(update)(index, s->handle, &s->box));
            }
        } else if (op < 98) {
            uint64_t handles[MAXN];
            AABB boxes[MAXN];
            size_t n = 0;
            for (i = 0; i < MAXN; i++) {
                L(Slot) *s = &L(model)[i];
                if (!s->alive) continue;
                s->box.min_x += 1;
                s->box.max_x += 1;
                handles[n] = s->handle;
                boxes[n++] = s->box;
            }
            OK(IDX(update_many)(index, handles, boxes, n));
        } else {
            size_t calls = 0, live = 0;
            if (op == 98 || !has_parallel_pairs(want_kind))
                OK(IDX(update_all)(index, L(mover), &calls));
            else
                OK(IDX(par_update_all)(index, L(mover), &calls));
            if (!has_parallel_pairs(want_kind))
                EXPECT(IDX(par_update_all)(index, L(mover), &calls), SPATIX_STATUS_UNSUPPORTED);
            for (i = 0; i < MAXN; i++) {
                L(Slot) *s = &L(model)[i];
                if (!s->alive) continue;
                live++;
                L(shift)(s->value, &s->box, &s->box);
            }
            CHECK(calls == live);
        }
        if (step % 250 == 249) {
            OK(IDX(maintain)(index));
            L(check_queries)(index);
        }
    }
    for (i = 0; i < MAXN; i++) {
        const L(Slot) *s = &L(model)[i];
        AABB b;
        uint64_t v;
        if (!s->alive) continue;
        OK(IDX(get)(index, s->handle, &b, &v));
        CHECK(v == s->value && b.min_x == s->box.min_x && b.max_y == s->box.max_y);
    }
    L(check_round_trip)(index, want_kind);
    OK(IDX(destroy)(index));
}

/* The static structures, built from the model as it is. */
static void L(check_static)(void) {
    AABB boxes[MAXN];
    POINT points[MAXN];
    uint64_t values[MAXN];
    size_t n = 0, i;
    INDEX *index = NULL;
    for (i = 0; i < MAXN; i++) {
        L(Slot) *s = &L(model)[i];
        s->alive = 1;
        s->box = L(random_box)();
        s->value = L(next_value)++;
        boxes[n] = s->box;
        values[n++] = s->value;
    }
    OK(NEW(packed_index, build)(boxes, values, n, &index));
    L(check_queries)(index);
    L(check_round_trip)(index, SPATIX_KIND_PACKED_INDEX);
    EXPECT(IDX(insert)(index, &boxes[0], 1, &values[0]), SPATIX_STATUS_UNSUPPORTED);
    OK(IDX(destroy)(index));

    for (i = 0; i < MAXN; i++) {
        L(Slot) *s = &L(model)[i];
        s->box.max_x = s->box.min_x;
        s->box.max_y = s->box.min_y;
        points[i].x = s->box.min_x;
        points[i].y = s->box.min_y;
    }
    OK(NEW(kd_tree, build)(points, values, n, &index));
    L(check_queries)(index);
    L(check_round_trip)(index, SPATIX_KIND_KD_TREE);
    OK(IDX(destroy)(index));
}

/* Opens `index`'s bytes in place (a static structure's), checks the view as the model says,
 * closes it and only then frees the bytes; misaligned or damaged bytes are refused. */
static void L(check_view)(const INDEX *index, SpatixKind want_kind) {
    size_t len = 0;
    uint8_t *base, *bytes, *shifted;
    INDEX *view = NULL;
    SpatixKind kind;
    uint64_t handle;
    EXPECT(IDX(save)(index, NULL, 0, &len), SPATIX_STATUS_BUFFER_TOO_SMALL);
    /* At a multiple of 64, as a view needs (what aligned_alloc(64, ...) gives in C11). */
    base = (uint8_t *)malloc(len + 64);
    shifted = (uint8_t *)malloc(len + 1);
    CHECK(base != NULL && shifted != NULL);
    bytes = base + (64 - (uintptr_t)base % 64) % 64;
    OK(IDX(save)(index, bytes, len, &len));
    OK(IDX(view_open)(bytes, len, &view));
    OK(IDX(kind)(view, &kind));
    CHECK(kind == want_kind);
    L(check_queries)(view);
    EXPECT(IDX(insert)(view, &L(model)[0].box, 1, &handle), SPATIX_STATUS_UNSUPPORTED);
    OK(IDX(destroy)(view));
    memcpy(shifted + 1, bytes, len);
    EXPECT(IDX(view_open)(shifted + 1, len, &view), SPATIX_STATUS_CORRUPT_BYTES);
    bytes[len / 2] ^= 1;
    EXPECT(IDX(view_open)(bytes, len, &view), SPATIX_STATUS_CORRUPT_BYTES);
    free(shifted);
    free(base);
}

/* The structure `kind` built by spatix_index_*_build from a full model (points for the
 * kd-tree), checked fresh, saved and loaded, and (a static one) read in place. */
static void L(check_built)(SpatixKind kind, const AABB *world) {
    AABB boxes[MAXN];
    uint64_t values[MAXN];
    size_t i;
    INDEX *index = NULL;
    for (i = 0; i < MAXN; i++) {
        L(Slot) *s = &L(model)[i];
        s->alive = 1;
        s->box = L(random_box)();
        if (kind == SPATIX_KIND_KD_TREE) {
            s->box.max_x = s->box.min_x;
            s->box.max_y = s->box.min_y;
        }
        s->value = L(next_value)++;
        boxes[i] = s->box;
        values[i] = s->value;
    }
    OK(IDX(build)(kind, is_static(kind) ? NULL : world, boxes, values, MAXN, &index));
    L(check_queries)(index);
    L(check_round_trip)(index, kind);
    if (is_static(kind)) {
        L(check_view)(index, kind);
    } else {
        size_t len = 0;
        uint8_t *bytes;
        INDEX *view = NULL;
        EXPECT(IDX(save)(index, NULL, 0, &len), SPATIX_STATUS_BUFFER_TOO_SMALL);
        bytes = (uint8_t *)malloc(len);
        CHECK(bytes != NULL);
        OK(IDX(save)(index, bytes, len, &len));
        EXPECT(IDX(view_open)(bytes, len, &view), SPATIX_STATUS_UNSUPPORTED);
        free(bytes);
    }
    OK(IDX(destroy)(index));
}

static void L(check_all)(void) {
    INDEX *index = NULL;
    AABB world, sample[50];
    int32_t kind;
    int i;
    world.min_x = 0;
    world.min_y = 0;
    world.max_x = 1000;
    world.max_y = 1000;
    /* The structures' own constructors. */
    OK(NEW(sweep_grid, new)(&world, 40, &index));
    L(check_dynamic)(index, SPATIX_KIND_SWEEP_GRID);
    OK(NEW(uniform_grid, new)(&world, 50, &index));
    L(check_dynamic)(index, SPATIX_KIND_UNIFORM_GRID);
    OK(NEW(loose_grid, new)(&world, 30, &index));
    L(check_dynamic)(index, SPATIX_KIND_LOOSE_GRID);
    for (i = 0; i < 50; i++) sample[i] = L(random_box)();
    /* The largest box random_box makes, so that a bounded structure takes every one. */
    sample[0].max_x = sample[0].min_x + 40;
    sample[0].max_y = sample[0].min_y + 40;
    OK(NEW(grid, auto)(SPATIX_KIND_LOOSE_GRID, &world, sample, 50, &index));
    L(check_dynamic)(index, SPATIX_KIND_LOOSE_GRID);
    L(check_static)();
    /* Every kind, by the kind-generic constructors. */
    for (kind = 1; kind <= SPATIX_KIND_COUNT; kind++) {
        if (is_static(kind)) {
            EXPECT(IDX(new)(kind, &world, sample, 50, MAXN, &index), SPATIX_STATUS_UNSUPPORTED);
        } else {
            OK(IDX(new)(kind, &world, sample, 50, MAXN, &index));
            L(check_dynamic)(index, (SpatixKind)kind);
        }
        L(check_built)((SpatixKind)kind, &world);
    }
    EXPECT(IDX(new)(SPATIX_KIND_COUNT + 1, &world, sample, 50, MAXN, &index),
           SPATIX_STATUS_INVALID_PARAMETER);
    EXPECT(IDX(build)(0, &world, sample, NULL, 0, &index), SPATIX_STATUS_INVALID_PARAMETER);
}

#undef MAXN
#undef L_BRUTE
